import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";

/**
 * A recursive listing of a directory a running server is changing: its collector deletes blobs and
 * removes the directories they empty, so a directory can vanish while it is listed. Walked one
 * directory at a time, a vanished one is simply empty (readdir's own recursion fails whole on it,
 * and under load ten retries of it all failed once); only `dir` itself must exist.
 */
export async function readdirLive(dir: string): Promise<Dirent[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const all: Dirent[] = [];
  for (const entry of entries) {
    all.push(entry);
    if (entry.isDirectory()) all.push(...(await below(join(entry.parentPath, entry.name))));
  }
  return all;
}

async function below(dir: string): Promise<Dirent[]> {
  try {
    return await readdirLive(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR")
      return []; // removed (emptied) while listed
    throw err;
  }
}
