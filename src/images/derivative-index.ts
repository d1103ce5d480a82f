/**
 * Keeps the derivative cache under its byte bound: the derivatives this process knows of, least
 * recently used first (a Map keeps insertion order; a use moves the key to the end). Past the
 * bound, the oldest are deleted from the blob store. Derivatives are only a cache: deleting one
 * another request is reading is harmless (the driver's stream holds its bytes; the next request
 * makes it again).
 */
import type { BlobKey, BlobStore } from "../storage/blob-store.js";

export function createDerivativeIndex(blobs: BlobStore, maxBytes: number) {
  const sizes = new Map<BlobKey, number>();
  let total = 0;
  let evicting = false;

  const evict = async () => {
    if (evicting) return;
    evicting = true;
    try {
      // The newest stays: its request is about to read it.
      while (total > maxBytes && sizes.size > 1) {
        const oldest = sizes.keys().next();
        if (oldest.done) break;
        total -= sizes.get(oldest.value) ?? 0;
        sizes.delete(oldest.value);
        await blobs.delete(oldest.value).catch(() => {});
      }
    } finally {
      evicting = false;
    }
  };

  return {
    /** `key` (of `size` bytes) was just made or read. */
    used(key: BlobKey, size: number) {
      const known = sizes.get(key);
      if (known !== undefined) sizes.delete(key);
      else total += size;
      sizes.set(key, size);
      if (total > maxBytes) void evict();
    },
    /** Bytes the known derivatives hold. */
    bytes: () => total,
  };
}
