// Generates the typed client's types (src/client/openapi.d.ts) from a served /openapi.json with
// openapi-typescript, which needs TypeScript 5's compiler API; it lives in the pinned tool project
// tools/openapi-gen (installed here on first use, like ensure-system-packages.mjs provisions Chromium).
//   node scripts/openapi-types.mjs [http://127.0.0.1:9082/openapi.json] [src/client/openapi.d.ts]
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const TOOL = fileURLToPath(new URL("../tools/openapi-gen", import.meta.url));
export const toolBin = (name) => join(TOOL, "node_modules/.bin", name);

/** True when every pin of the tool project is installed at exactly its version. */
function installed() {
  const { dependencies } = JSON.parse(readFileSync(join(TOOL, "package.json"), "utf8"));
  return Object.entries(dependencies).every(([name, version]) => {
    const file = join(TOOL, "node_modules", name, "package.json");
    return existsSync(file) && JSON.parse(readFileSync(file, "utf8")).version === version;
  });
}

export function ensureGenerator() {
  if (installed()) return;
  console.log("installing tools/openapi-gen (openapi-typescript + TypeScript 5, once) …");
  execFileSync("npm", ["ci", "--prefix", TOOL, "--no-audit", "--no-fund", "--loglevel=error"], { stdio: "inherit" });
}

/** Async: the source may be a server in this very process (a test), which must keep answering. */
export async function generateTypes(source, out) {
  ensureGenerator();
  await promisify(execFile)(toolBin("openapi-typescript"), [source, "--output", out]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [source = "http://127.0.0.1:9082/openapi.json", out = "src/client/openapi.d.ts"] = process.argv.slice(2);
  if (source.startsWith("-")) {
    console.error("usage: node scripts/openapi-types.mjs [source URL or file of /openapi.json] [output .d.ts]");
    process.exit(2);
  }
  await generateTypes(source, out);
  console.log(`wrote ${out} from ${source}`);
}
