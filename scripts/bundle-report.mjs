// `npm run bundle:report`: what the Worker bundle is made of. Bundles src/worker.ts with esbuild the
// way `wrangler deploy` does (minified ES module for workerd, wrangler.toml's [alias] applied) and
// prints the total, its gzipped size and the biggest inputs grouped by package or source folder.
// Wrangler's own "Total Upload … / gzip …" (`npm run build:worker`) stays the figure that counts;
// this one is a little below it (wrangler adds its own wrapper modules). `--top=N` prints N rows (default 20), `--files` ungrouped.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The `"name" = "path"` lines of wrangler.toml's [alias] table (flat: no nested tables there). */
export function wranglerAliases(toml) {
  const section = toml.split(/^\[alias\]\s*$/m)[1]?.split(/^\[/m)[0] ?? "";
  return Object.fromEntries([...section.matchAll(/^\s*"([^"]+)"\s*=\s*"([^"]+)"/gm)].map((m) => [m[1], m[2]]));
}

export async function bundleWorker() {
  const alias = wranglerAliases(readFileSync(new URL("../wrangler.toml", import.meta.url), "utf8"));
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: ["src/worker.ts"],
    outfile: "worker.js",
    write: false,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    external: ["cloudflare:*", "node:*"],
    alias,
    metafile: true,
    logLevel: "warning",
  });
  const code = result.outputFiles[0].contents;
  const inputs = Object.values(result.metafile.outputs)[0].inputs;
  return { bytes: code.length, gzipBytes: gzipSync(code).length, inputs };
}

/** "zod", "@libsql/client" for dependencies; the first two folders below src/ for our own code. */
const groupOf = (path) => path.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1] ?? path.split("/").slice(0, 3).join("/");

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 20);
  const byFile = process.argv.includes("--files");
  const { bytes, gzipBytes, inputs } = await bundleWorker();
  const sizes = new Map();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const key = byFile ? path : groupOf(path);
    sizes.set(key, (sizes.get(key) ?? 0) + bytesInOutput);
  }
  const kib = (n) => `${(n / 1024).toFixed(1).padStart(7)} KiB`;
  console.log(`Worker bundle: ${kib(bytes)} minified, ${kib(gzipBytes)} gzipped`);
  for (const [key, size] of [...sizes].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${kib(size)} ${((100 * size) / bytes).toFixed(1).padStart(5)} %  ${key}`);
  }
}
