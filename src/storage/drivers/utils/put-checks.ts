/**
 * The put steps every BlobStore driver shares: key check before reading, per-chunk and hash checks
 * while ingesting, and the content-addressed commit. Web APIs only (R2 and S3 run in workerd).
 */
import { StorageError, type BlobInfo, type BlobKey, type PutOptions } from "../../blob-store.js";
import { parseBlobKey } from "../../keys.js";

const noop = () => {};

/** Resolves the put's target before any byte is read; on an invalid key the body is cancelled. */
export function targetOrCancel<T>(body: ReadableStream<Uint8Array>, resolve: () => T): T {
  try {
    return resolve();
  } catch (err) {
    body.cancel(err).catch(noop);
    throw err;
  }
}

/** Throws unless `chunk` is a Uint8Array: the contract's only chunk type. */
export function checkChunk(chunk: unknown): asserts chunk is Uint8Array {
  if (!(chunk instanceof Uint8Array)) throw new TypeError("blob body chunks must be Uint8Array");
}

/** TOO_LARGE once `size` bytes so far plus `chunkBytes` more pass `maxBytes`. */
export function checkLimit(driver: string, maxBytes: number | undefined, size: number, chunkBytes: number): void {
  if (maxBytes !== undefined && size + chunkBytes > maxBytes) {
    throw new StorageError(driver, "TOO_LARGE", `upload exceeds the limit of ${maxBytes} bytes`);
  }
}

/** HASH_MISMATCH unless the content's `sha256` is `expectedSha256` (when one was given). */
export function checkHash(driver: string, sha256: string, expectedSha256: string | undefined): void {
  if (expectedSha256 !== undefined && expectedSha256.toLowerCase() !== sha256) {
    throw new StorageError(driver, "HASH_MISMATCH", `content hashes to ${sha256}, expected ${expectedSha256}`);
  }
}

/** How a driver finishes an ingested upload whose key is derived from its content. */
export interface ContentAddressedSteps {
  /** Whether a blob already exists at `key`. */
  exists(key: BlobKey): Promise<boolean>;
  /** Puts the ingested content at `key`, leaving nothing staged behind on success. */
  commit(key: BlobKey): Promise<void>;
  /** Drops the ingested content (never throws). */
  discard(): Promise<void>;
}

/**
 * The second half of `putContentAddressed`: derives the key, lets the caller `reserve` it, keeps an
 * existing blob (same key means same content), else commits. Two concurrent first uploads may both
 * commit (both report created); the content is identical, so that race is harmless. On any failure
 * the ingested content is dropped.
 */
export async function commitContentAddressed(
  info: BlobInfo,
  keyFor: (info: BlobInfo) => BlobKey,
  reserve: PutOptions["reserve"],
  steps: ContentAddressedSteps,
): Promise<BlobInfo & { key: BlobKey; created: boolean }> {
  try {
    const key = parseBlobKey(keyFor(info));
    // Before the existence check: from here on no collector may delete the blob this put relies on.
    await reserve?.(key);
    if (await steps.exists(key)) {
      await steps.discard();
      return { ...info, key, created: false };
    }
    await steps.commit(key);
    return { ...info, key, created: true };
  } catch (err) {
    await steps.discard();
    throw err;
  }
}
