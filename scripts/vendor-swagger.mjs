// Copies the Swagger UI files the explorer serves into public/vendor/swagger-ui-dist/, for the
// Workers assets binding (Node and Bun read them from node_modules). public/ is generated.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildLibraryClient, replaceFile } from "./build.mjs";

// The allow-list of src/routes/explorer/index.ts: nothing else is ever served.
const FILES = ["swagger-ui.css", "swagger-ui-bundle.js", "favicon-16x16.png", "favicon-32x32.png"];

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
const target = join(root, "public", "vendor", "swagger-ui-dist");
// Whole or not at all: two `wrangler dev` started together each run this, and serve what it wrote.
for (const file of FILES) await replaceFile(join(target, file), await readFile(join(dist, file)));

// The /library page's script goes beside them (public/library/library.js), read through the same binding.
await buildLibraryClient(join(root, "public", "library", "library.js"));
