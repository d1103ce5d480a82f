/**
 * The derivative cache's bound (CMS_IMAGE_CACHE_BYTES): past it, the least recently used
 * derivatives are deleted from the blob store (the real memory driver), the newest never.
 */
import { describe, expect, it } from "vitest";
import { createDerivativeIndex } from "../../src/images/derivative-index.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { parseBlobKey } from "../../src/storage/keys.js";

const ten = () => new Blob([new Uint8Array(10)]).stream();

describe("derivative cache bound", () => {
  it("evicts the least recently used past CMS_IMAGE_CACHE_BYTES", async () => {
    const blobs = createMemoryBlobStore();
    const index = createDerivativeIndex(blobs, 25);
    const [a, b, c] = ["a", "b", "c"].map((n) => parseBlobKey(`img/${"0".repeat(32)}/${"1".repeat(64)}/${n}.png`));
    for (const key of [a!, b!, c!]) await blobs.put(key, ten());
    index.used(a!, 10);
    index.used(b!, 10);
    index.used(a!, 10); // a is used again: b is now the oldest
    index.used(c!, 10);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await blobs.head(b!)).toBeNull();
    expect(await blobs.head(a!)).not.toBeNull();
    expect(await blobs.head(c!)).not.toBeNull();
    expect(index.bytes()).toBe(20);
  });
});
