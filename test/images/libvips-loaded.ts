/**
 * Whether process `pid` has libvips mapped (sharp's `libvips-cpp.so`, from /proc/<pid>/maps): the
 * servers load it soon after listening (runtime/host/bootstrap.ts warmImages), so a first image
 * request does not pay for loading it.
 */
import { readFile } from "node:fs/promises";

export async function libvipsLoaded(pid: number | undefined): Promise<boolean> {
  if (pid === undefined) return false;
  return /libvips-cpp\.so/.test(await readFile(`/proc/${pid}/maps`, "utf8"));
}
