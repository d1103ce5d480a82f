/** The explorer's Swagger UI files, served from the installed swagger-ui-dist package (no CDN). */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { nodeToWebStream } from "./streams.js";

const swaggerDist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

export async function readSwaggerAsset(file: string) {
  const path = join(swaggerDist, file);
  try {
    if (!(await stat(path)).isFile()) return null;
  } catch {
    return null;
  }
  return nodeToWebStream(createReadStream(path));
}
