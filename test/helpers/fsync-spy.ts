import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { vi } from "vitest";

/**
 * The call stacks of every FileHandle `sync()` (fsync of files and directories alike) made while
 * `run` runs, the real syncs still done. FileHandle's class is not exported: its prototype is taken
 * from a probe file opened in `dir`.
 */
export async function fsyncsDuring(dir: string, run: () => Promise<unknown>): Promise<string[]> {
  const probePath = join(dir, ".fsync-probe");
  const probe = await open(probePath, "w");
  const proto = Object.getPrototypeOf(probe) as { sync: (...args: unknown[]) => Promise<void> };
  await probe.close();
  await rm(probePath);
  const real = proto.sync;
  const stacks: string[] = [];
  const spy = vi.spyOn(proto, "sync").mockImplementation(function (this: unknown, ...args: unknown[]) {
    stacks.push(new Error().stack ?? "");
    return real.apply(this, args);
  });
  try {
    await run();
    return stacks;
  } finally {
    spy.mockRestore();
  }
}
