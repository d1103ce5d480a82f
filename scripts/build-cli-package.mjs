// Builds packages/cli: the `cms` command as one self-contained ES module (commander, cli-progress,
// the typed client and the rest bundled in), so the package has no dependencies and installs in a
// second anywhere, offline included, with no install scripts. Its version is the service's.
//   node scripts/build-cli-package.mjs      (packages/cli's prepack runs it)
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PACKAGE = fileURLToPath(new URL("../packages/cli/package.json", import.meta.url));
export const CLI_PACKAGE_BUNDLE = fileURLToPath(new URL("../packages/cli/dist/cms.mjs", import.meta.url));

export async function buildCliPackage() {
  const { version } = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));
  await build({
    absWorkingDir: ROOT,
    entryPoints: ["src/cli/main.ts"],
    outfile: CLI_PACKAGE_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    // The CommonJS packages inside (commander, cli-progress) call require() for Node's own modules.
    banner: {
      js: '#!/usr/bin/env node\nimport { createRequire as __cmsRequire } from "node:module";\nconst require = __cmsRequire(import.meta.url);',
    },
    define: { __CMS_VERSION__: JSON.stringify(version) },
    logLevel: "warning",
  });
  // The package's version follows the service's, so `cms --version` and npm agree.
  const manifest = JSON.parse(await readFile(PACKAGE, "utf8"));
  if (manifest.version !== version) {
    manifest.version = version;
    await writeFile(PACKAGE, `${JSON.stringify(manifest, null, 2)}\n`);
  }
  return CLI_PACKAGE_BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildCliPackage();
  console.error(`built ${CLI_PACKAGE_BUNDLE}`);
}
