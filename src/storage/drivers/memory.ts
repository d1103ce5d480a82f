/**
 * In-memory blob driver for tests and local development: the same contract as the fs driver, Web
 * APIs only. Everything lives in the heap, so it is not for production data.
 */
import type { BlobInfo, BlobKey, BlobObject, BlobStore, PutOptions } from "../blob-store.js";
import { parseBlobKey, parseKeyPrefix } from "../keys.js";
import { checkChunk, checkHash, checkLimit, targetOrCancel } from "./utils/put-checks.js";
import { checkRange } from "./utils/driver-kit.js";
import { checkOwnerId } from "./utils/owner-marker.js";
import { toHex } from "../../lib/sha256.js";

export const DRIVER = "memory";

const READ_CHUNK = 64 * 1024;

interface StoredBlob extends BlobInfo {
  /** The content, copied out of the caller's chunks so later mutation cannot change it. */
  bytes: Uint8Array<ArrayBuffer>;
}

const noop = () => {};

/**
 * Reads the whole body, enforcing `maxBytes` as chunks arrive (cancelling the body once exceeded),
 * then hashes it. crypto.subtle cannot hash incrementally, hence collect-then-digest. An error from
 * the body itself is rethrown unchanged.
 */
async function ingest(body: ReadableStream<Uint8Array>, options: PutOptions): Promise<StoredBlob> {
  const { maxBytes, expectedSha256 } = options;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    try {
      checkChunk(value);
      checkLimit(DRIVER, maxBytes, size, value.byteLength);
    } catch (err) {
      reader.cancel(err).catch(noop);
      throw err;
    }
    chunks.push(value.slice()); // the producer may reuse its buffer after we read it
    size += value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const sha256 = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
  checkHash(DRIVER, sha256, expectedSha256);
  return { bytes, size, sha256 };
}

/** Streams a slice of a stored blob in copied chunks, so consumers cannot mutate the store. */
function bytesStream(bytes: Uint8Array, start: number, end: number): ReadableStream<Uint8Array> {
  let next = start;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (next < end) {
          const chunkEnd = Math.min(next + READ_CHUNK, end);
          controller.enqueue(bytes.slice(next, chunkEnd));
          next = chunkEnd;
        }
        if (next >= end) controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}

export function createMemoryBlobStore(): BlobStore {
  const blobs = new Map<BlobKey, StoredBlob>();
  const info = ({ size, sha256 }: StoredBlob): BlobInfo => ({ size, sha256 });
  let ownerId: string | null = null;

  return {
    driver: DRIVER,

    async put(key, body, options = {}) {
      const valid = targetOrCancel(body, () => parseBlobKey(key));
      const blob = await ingest(body, options);
      blobs.set(valid, blob); // one synchronous swap: readers see old or new, never a mix
      return info(blob);
    },

    async putContentAddressed(body, keyFor, options = {}) {
      const blob = await ingest(body, options);
      const key = parseBlobKey(keyFor(info(blob)));
      await options.reserve?.(key);
      if (blobs.has(key)) return { ...info(blob), key, created: false };
      blobs.set(key, blob);
      return { ...info(blob), key, created: true };
    },

    async get(key, range): Promise<BlobObject | null> {
      // Snapshot the entry now: an overwrite during the read swaps the map entry, not these bytes.
      const blob = blobs.get(parseBlobKey(key));
      if (!blob) return null;
      if (range) checkRange(range, blob.size);
      const start = range?.start ?? 0;
      const end = range ? range.end + 1 : blob.size;
      return { ...info(blob), body: bytesStream(blob.bytes, start, end) };
    },

    async head(key) {
      const blob = blobs.get(parseBlobKey(key));
      return blob ? info(blob) : null;
    },

    async delete(key) {
      blobs.delete(parseBlobKey(key));
    },

    async *list(prefix) {
      const validPrefix = parseKeyPrefix(prefix);
      // Snapshot, so puts and deletes during iteration cannot disturb it.
      const keys = [...blobs.keys()].filter((key) => key.startsWith(validPrefix)).sort();
      yield* keys;
    },

    async check() {},

    async probe() {},

    async owner() {
      return ownerId;
    },

    async claimOwner(id) {
      checkOwnerId(id);
      ownerId ??= id; // synchronous: racing claims cannot interleave
      return ownerId;
    },
  };
}
