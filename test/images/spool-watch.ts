/** Temp files an image transform creates in its spool folder, seen with a real fs.watch (inotify). */
import { watch } from "node:fs";

/** Runs `work` and counts the files created in `dir` meanwhile. */
export async function spooledDuring<T>(dir: string, work: () => Promise<T>): Promise<{ result: T; created: number }> {
  let created = 0;
  const watcher = watch(dir, (event) => {
    if (event === "rename") created++;
  });
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last events arrive
    return { result, created };
  } finally {
    watcher.close();
  }
}
