import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";

/**
 * A recursive listing of a directory a running server is changing: its collector deletes blobs and
 * removes the directories they empty, so a directory can vanish under readdir (ENOENT); list again.
 */
export async function readdirLive(dir: string): Promise<Dirent[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await readdir(dir, { recursive: true, withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || attempt === 10) throw err;
    }
  }
}
