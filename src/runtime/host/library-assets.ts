/** The /library page's script, built by scripts/build.mjs into dist/library/ (found upwards from this module). */
import { createReadStream, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeToWebStream } from "./streams.js";

// src/runtime/host/ under tsx, dist/node/ when bundled: the project root is the first folder above with dist/library/.
function libraryDist(): string | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "dist", "library"))) return join(dir, "dist", "library");
    if (dirname(dir) === dir) return null;
  }
}

export async function readLibraryAsset(file: string) {
  // The route asks for its one fixed file name; nothing from a URL reaches this path.
  const dist = libraryDist();
  const path = dist && join(dist, file);
  if (!path || !existsSync(path)) return null;
  return nodeToWebStream(createReadStream(path));
}
