/**
 * One writer at a time for a small file that several `cms` processes read, change and write back
 * (locks.json): two `cms lock` at once each read the file before the other wrote it, and one lock
 * was lost. The writer holds `<file>.lock`, created exclusively (O_EXCL) beside it, for the
 * milliseconds its read and write take. One left behind by a killed process is taken over once
 * it is older than STALE_MS.
 */
import { open, rm, stat } from "node:fs/promises";

/** A lock file this old was left by a process that died holding it (a write holds it for milliseconds). */
const STALE_MS = 10_000;
/** How long a writer waits for the lock before giving up with an error saying which file holds it. */
const WAIT_MS = 30_000;

export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      await (await open(lock, "wx", 0o600)).close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const age = await stat(lock).then(
        (held) => Date.now() - held.mtimeMs,
        () => 0, // released meanwhile: try again
      );
      if (age > STALE_MS) {
        await rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`${lock} is held by another cms process (remove it if none is running)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}
