/**
 * The derivative cache's bound (CMS_IMAGE_CACHE_BYTES) on its index in a real libSQL file: past the
 * bound, the least recently used derivatives are deleted from the blob store (the real memory
 * driver) and forgotten, the one just made never; a repeat use within the grain writes nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createDerivativeIndex, TOUCH_EVERY_MS } from "../../src/images/derivative-index.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { tempStore } from "../helpers/temp-store.js";

const ten = () => new Blob([new Uint8Array(10)]).stream();
const temp = await tempStore("img-bound");
afterAll(() => temp.close());

describe("derivative cache bound", () => {
  it("evicts the least recently used past CMS_IMAGE_CACHE_BYTES, never the one just made", async () => {
    const blobs = createMemoryBlobStore();
    const store = (await temp.store()).derivatives;
    const time = fakeClock();
    const index = createDerivativeIndex({ blobs, store, maxBytes: 25, now: () => time.nowMs() });
    const [a, b, c] = ["a", "b", "c"].map((n) => parseBlobKey(`img/${"0".repeat(32)}/${"1".repeat(64)}/${n}.png`));
    for (const key of [a!, b!, c!]) await blobs.put(key, ten());
    const settled = async () => expect.poll(async () => (await store.oldest(10)).length).toBeGreaterThan(0);

    index.used(a!, 10, true);
    time.advance(1);
    index.used(b!, 10, true);
    await settled();
    // Within the grain a use is not written again; past it, it is: a is now newer than b.
    time.advance(TOUCH_EVERY_MS);
    index.used(a!, 10, false);
    await expect.poll(async () => (await store.oldest(10)).map((d) => d.key)).toEqual([b, a]);
    const written = (await store.oldest(10)).find((d) => d.key === a)!.lastUsedAt;
    time.advance(1000);
    index.used(a!, 10, false);
    time.advance(1);
    index.used(c!, 10, true); // 30 bytes > 25: the oldest (b) goes, c (just made) stays
    await expect.poll(async () => (await store.oldest(10)).map((d) => d.key)).toEqual([a, c]);
    expect(await blobs.head(b!)).toBeNull();
    expect(await blobs.head(a!)).not.toBeNull();
    expect(await blobs.head(c!)).not.toBeNull();
    expect((await store.oldest(10)).find((d) => d.key === a)!.lastUsedAt).toBe(written);
    expect(await store.totalBytes()).toBe(20);

    // A bound of 0 (the collector's pass) empties the cache but for nothing kept.
    const none = createDerivativeIndex({ blobs, store, maxBytes: 0, now: () => time.nowMs() });
    expect(await none.evict(c!)).toBe(1);
    expect((await store.oldest(10)).map((d) => d.key)).toEqual([c]);
    await store.forgetUnder(`img/${"0".repeat(32)}/${"1".repeat(64)}/`);
    expect(await store.totalBytes()).toBe(0);
  });

  it("an eviction asked for while one runs runs after it: bytes recorded meanwhile are trimmed too", async () => {
    const blobs = createMemoryBlobStore();
    const real = (await temp.store()).derivatives;
    await real.forgetUnder(`img/${"2".repeat(32)}/`);
    // The first eviction reads the total, then waits here until the next derivative is recorded.
    let totalRead!: () => void;
    const read = new Promise<void>((resolve) => (totalRead = resolve));
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    let first = true;
    const store = {
      ...real,
      async totalBytes() {
        const total = await real.totalBytes();
        if (first) {
          first = false;
          totalRead();
          await resumed;
        }
        return total;
      },
    };
    const index = createDerivativeIndex({ blobs, store, maxBytes: 25, now: () => 0 });
    const keys = ["a", "b", "c", "d"].map((n) => parseBlobKey(`img/${"2".repeat(32)}/${"3".repeat(64)}/${n}.png`)!);
    for (const [i, key] of keys.entries()) {
      await blobs.put(key, ten());
      if (i < 3) await real.used(key, 10, i);
    }
    const one = index.evict(keys[2]); // sees 30 bytes
    await read;
    await real.used(keys[3]!, 10, 3); // 40 bytes now
    const two = index.evict(keys[3]);
    resume();
    await Promise.all([one, two]);
    expect(await real.totalBytes()).toBeLessThanOrEqual(25);
    expect(await blobs.head(keys[3]!)).not.toBeNull();
  });
});
