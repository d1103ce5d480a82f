// The open-file pool behind the fs driver's openFile: bounded by count, unused files closed after
// their idle time, never a file closed under a reader, and one open for concurrent first readers.
import { describe, expect, it } from "vitest";
import { createOpenFiles } from "../../../../src/storage/drivers/fs/open-files.js";

/** A stand-in handle that records its closing (the pool only ever calls close()). */
function handles() {
  const closed: string[] = [];
  let opens = 0;
  const open = (name: string) => async () => {
    opens += 1;
    return { handle: { close: async () => void closed.push(name) }, info: name };
  };
  return { closed, open, opens: () => opens };
}

describe("open-file pool", () => {
  it("shares one open between concurrent first readers and keeps the file for the next", async () => {
    const files = createOpenFiles<{ close(): Promise<void> }, string>({ max: 4, idleMs: 60_000 });
    const h = handles();
    const [a, b] = await Promise.all([files.acquire("a", h.open("a")), files.acquire("a", h.open("a"))]);
    expect(h.opens()).toBe(1);
    expect(files.stats()).toEqual({ pooled: 1, readers: 2 });
    a?.release();
    b?.release();
    (await files.acquire("a", h.open("a")))?.release();
    expect(h.opens()).toBe(1);
    expect(await files.acquire("missing", async () => null)).toBeNull();
  });

  it("keeps at most `max` files, never closing one under a reader, and closes idle ones", async () => {
    const files = createOpenFiles<{ close(): Promise<void> }, string>({ max: 2, idleMs: 30 });
    const h = handles();
    const held = await files.acquire("a", h.open("a"));
    (await files.acquire("b", h.open("b")))?.release();
    (await files.acquire("c", h.open("c")))?.release(); // evicts "a" from the pool; its reader keeps it
    expect(h.closed).toEqual([]);
    held?.release();
    expect(h.closed).toEqual(["a"]);
    await expect.poll(() => files.stats().pooled).toBe(0);
    expect(h.closed.sort()).toEqual(["a", "b", "c"]);
  });

  it("forgets a path written meanwhile: the open in flight serves its reader and is not kept", async () => {
    const files = createOpenFiles<{ close(): Promise<void> }, string>({ max: 4, idleMs: 60_000 });
    const h = handles();
    const pending = files.acquire("a", h.open("a"));
    files.forget("a");
    const got = await pending;
    expect(got?.info).toBe("a");
    expect(files.stats()).toEqual({ pooled: 0, readers: 1 });
    got?.release();
    expect(h.closed).toEqual(["a"]);
  });
});
