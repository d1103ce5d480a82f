// Builds the Node server: src/node.ts and its dependencies bundled by esbuild into one ES module,
// dist/node/server.mjs, which `npm start` runs with plain `node`. Without tsx's loader and the
// thousands of module files it would read, a cold start is ~4× faster and the process ~70 MiB
// smaller (bench/RESULTS.md, scenario 5). Tests (test/global-setup.ts) and the bench build it too.
//
// Kept outside the bundle: libSQL (a native addon, resolved at run time) and swagger-ui-dist (its
// files are read from disk). The migrations are found by walking up to drizzle/ from the module
// (src/runtime/host/migrations.ts), so the bundle's depth does not matter.
import { build } from "esbuild";
import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const SERVER_BUNDLE = fileURLToPath(new URL("../dist/node/server.mjs", import.meta.url));

/** Writes a file whole or not at all: a process reading it meanwhile sees the old file or the new one. */
export async function replaceFile(path, contents) {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, contents);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * esbuild, its outputs swapped in atomically. `npm start` builds before it serves, so a second
 * `npm start` rebuilds the bundle another server may be loading at that moment; written in place,
 * that server read a truncated module.
 */
async function bundle(options) {
  const result = await build({ ...options, write: false });
  // The map first: a bundle never names a map that is not there yet.
  const files = [...result.outputFiles].sort(
    (a, b) => Number(b.path.endsWith(".map")) - Number(a.path.endsWith(".map")),
  );
  for (const file of files) await replaceFile(file.path, file.contents);
  return result;
}

export async function buildServer(outfile = SERVER_BUNDLE) {
  await bundle({
    absWorkingDir: ROOT,
    entryPoints: ["src/node.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "linked", // for `node --enable-source-maps`; left off by default (≈ 30 ms of start-up)
    external: ["libsql", "@libsql/*", "swagger-ui-dist"],
    // Idle memory (bench scenario 5): zod without its translations (scripts/lean-zod.mjs), and no
    // comments or whitespace. Node keeps the whole source as a string on the heap, two bytes a
    // character once a comment holds one "…" (3.3 MiB before, 0.9 MiB now); names stay readable.
    alias: { zod: "./scripts/lean-zod.mjs" },
    minifyWhitespace: true,
    minifySyntax: true,
    // CommonJS dependencies inside an ES module bundle still call require().
    banner: {
      js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  return outfile;
}

export const CLIENT_BUNDLE = fileURLToPath(new URL("../dist/client/index.mjs", import.meta.url));

/**
 * The typed client (package.json "exports": "./client") as one ES module for any runtime: bundled
 * for the browser platform, so a `node:` import anywhere in it fails the build.
 */
export async function buildClient(outfile = CLIENT_BUNDLE) {
  await bundle({
    absWorkingDir: ROOT,
    entryPoints: ["src/client/index.ts"],
    outfile,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    logLevel: "warning",
  });
  return outfile;
}

export const LIBRARY_SCRIPT = fileURLToPath(new URL("../dist/library/library.js", import.meta.url));

/**
 * The /library page's browser script (src/library-client/, tus-js-client with it) as one minified
 * file. Node and Bun serve it from dist/library/; the Worker from its assets (scripts/vendor-swagger.mjs
 * builds it into public/library/), so it never weighs on the Worker bundle.
 */
export async function buildLibraryClient(outfile = LIBRARY_SCRIPT) {
  await bundle({
    absWorkingDir: ROOT,
    entryPoints: ["src/library-client/main.ts"],
    outfile,
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  return outfile;
}

export const CLI_BUNDLE = fileURLToPath(new URL("../dist/cli/cms.mjs", import.meta.url));
/** The sources the CLI bundle was built from: bin/cms.mjs runs the bundle only while none is newer. */
export const CLI_INPUTS = fileURLToPath(new URL("../dist/cli/inputs.json", import.meta.url));

/**
 * The `cms` command (src/cli/main.ts) as one ES module, its packages left to node_modules. Through
 * tsx each run spent ~0.8 s of CPU compiling and loading; the bundle starts in ~0.2 s.
 */
export async function buildCli() {
  const { metafile } = await bundle({
    absWorkingDir: ROOT,
    entryPoints: ["src/cli/main.ts"],
    outfile: CLI_BUNDLE,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    metafile: true,
    logLevel: "warning",
  });
  // Paths relative to the package root (esbuild's absWorkingDir).
  await replaceFile(CLI_INPUTS, `${JSON.stringify(Object.keys(metafile.inputs))}\n`);
  return CLI_BUNDLE;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await Promise.all([buildServer(), buildClient(), buildLibraryClient(), buildCli()]);
  console.error(
    `built dist/node/server.mjs, dist/client/index.mjs, dist/library/library.js and dist/cli/cms.mjs in ${Math.round(performance.now() - started)} ms`,
  );
}
