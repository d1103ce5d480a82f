/**
 * R2 blob driver (Workers binding), Web APIs only. A body that ends within one part is buffered and
 * stored with a single `put`; a longer one streams as a multipart upload to a temp key and is copied
 * into place once its SHA-256 is known (R2 keeps custom metadata only from the first request).
 */
import { Sha256 } from "../../lib/sha256.js";
import {
  StorageError,
  type BlobInfo,
  type BlobKey,
  type BlobObject,
  type BlobStore,
  type DirectStorage,
  type ByteRange,
  type PutOptions,
} from "../blob-store.js";
import { checkRangeShape, rangeOutside } from "./utils/driver-kit.js";
import { ioWrappers } from "./utils/io-errors.js";
import { isSha256Hex, parseBlobKey, parseKeyPrefix, tryParseBlobKey } from "../keys.js";
import { decodeOwner, encodeOwner, OWNER_MARKER } from "./utils/owner-marker.js";
import { checkChunk, checkHash, checkLimit, commitContentAddressed, targetOrCancel } from "./utils/put-checks.js";

export const DRIVER = "r2";

const MiB = 1024 * 1024;
/** R2 refuses parts smaller than this, except the last one. */
export const MIN_PART_SIZE = 5 * MiB;
/** R2's largest single-request upload (5 GiB minus 5 MiB). */
export const MAX_SINGLE_PUT = 5 * 1024 * MiB - 5 * MiB;
/** Part size when copying an object above `maxSinglePut` (R2 allows 10,000 parts: 10 TB). */
const MAX_COPY_PART = 1024 * MiB;
/** Uploads in flight and probes live here. Keys never start with ".", so no blob can collide or be listed. */
const TEMP_PREFIX = ".tmp/";
/** Name of the custom metadata field holding the lowercase hex SHA-256 of the content. */
export const SHA256_METADATA = "sha256";

/** The parts of the R2 binding this driver uses (structural, so it type-checks outside Workers too). */
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>;
  get(key: string, options?: { range?: { offset: number; length?: number } }): Promise<R2ObjectBodyLike | null>;
  put(
    key: string,
    value: ReadableStream | ArrayBuffer | ArrayBufferView | null,
    options?: { customMetadata?: Record<string, string>; sha256?: string; onlyIf?: Headers },
  ): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: { prefix?: string; cursor?: string; limit?: number }): Promise<{
    objects: { key: string }[];
    truncated: boolean;
    cursor?: string;
  }>;
  createMultipartUpload(
    key: string,
    options?: { customMetadata?: Record<string, string> },
  ): Promise<R2MultipartUploadLike>;
}

export interface R2ObjectLike {
  key: string;
  /** The whole object's size, also for a ranged `get`. */
  size: number;
  customMetadata?: Record<string, string>;
}

export interface R2ObjectBodyLike extends R2ObjectLike {
  body: ReadableStream<Uint8Array>;
  text(): Promise<string>;
}

export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}

export interface R2MultipartUploadLike {
  uploadPart(partNumber: number, value: ReadableStream | ArrayBuffer | ArrayBufferView): Promise<R2UploadedPartLike>;
  complete(parts: R2UploadedPartLike[]): Promise<unknown>;
  abort(): Promise<void>;
}

export interface R2BlobStoreOptions {
  /**
   * Presigned URLs on the bucket's S3 API (R2's binding has none): the S3 driver's, built from the
   * CMS_R2_* access key settings (runtime/worker/deps.ts). Absent: uploads by URL go through the Worker.
   */
  direct?: DirectStorage;
  /**
   * Bytes buffered per upload part, and the largest body stored with one `put`. A body that ends
   * within the first part costs one request and no temp object; a longer one is uploaded in parts
   * of exactly this size (R2 wants equal parts of at least 5 MiB, except the last) to a temp key and
   * then copied to its key. Memory per upload is about one part.
   * @default 8 MiB
   */
  partSize?: number;
  /**
   * Largest object copied from its temp key with one streamed `put`; bigger ones are copied as a
   * multipart upload of ranged reads. Only tests lower it.
   * @default MAX_SINGLE_PUT (R2's limit, 5 GiB minus 5 MiB)
   */
  maxSinglePut?: number;
}

const noop = () => {};

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** R2 failures as StorageError IO. */
const { ioError, io } = ioWrappers(DRIVER, describe);

/** What an upload left: the bytes in memory (small body) or a complete temp object (large body). */
type Ingested = { info: BlobInfo } & ({ bytes: Uint8Array; temp?: undefined } | { temp: string; bytes?: undefined });

class R2Store implements BlobStore {
  readonly driver = DRIVER;
  readonly #bucket: R2BucketLike;
  readonly #partSize: number;
  readonly #maxSinglePut: number;
  readonly direct?: DirectStorage;

  constructor(bucket: R2BucketLike, options: R2BlobStoreOptions) {
    this.#bucket = bucket;
    if (options.direct) this.direct = options.direct;
    this.#partSize = options.partSize ?? 8 * MiB;
    this.#maxSinglePut = options.maxSinglePut ?? MAX_SINGLE_PUT;
    if (!Number.isSafeInteger(this.#partSize) || this.#partSize < MIN_PART_SIZE) {
      throw new RangeError(`partSize must be an integer of at least ${MIN_PART_SIZE} bytes`);
    }
    if (
      !Number.isSafeInteger(this.#maxSinglePut) ||
      this.#maxSinglePut < MIN_PART_SIZE ||
      this.#maxSinglePut > MAX_SINGLE_PUT
    ) {
      throw new RangeError(`maxSinglePut must be an integer from ${MIN_PART_SIZE} to ${MAX_SINGLE_PUT}`);
    }
  }

  async put(key: BlobKey, body: ReadableStream<Uint8Array>, options: PutOptions = {}): Promise<BlobInfo> {
    const target = targetOrCancel(body, () => parseBlobKey(key));
    const data = await this.#ingest(body, options);
    try {
      await this.#store(target, data);
    } finally {
      await this.#dropTemp(data);
    }
    return data.info;
  }

  async putContentAddressed(
    body: ReadableStream<Uint8Array>,
    keyFor: (info: BlobInfo) => BlobKey,
    options: PutOptions = {},
  ): Promise<BlobInfo & { key: BlobKey; created: boolean }> {
    const data = await this.#ingest(body, options);
    return commitContentAddressed(data.info, keyFor, options.reserve, {
      exists: async (key) => (await io("head", () => this.#bucket.head(key))) != null,
      commit: async (key) => {
        await this.#store(key, data);
        await this.#dropTemp(data);
      },
      discard: () => this.#dropTemp(data),
    });
  }

  async get(key: BlobKey, range?: ByteRange): Promise<BlobObject | null> {
    const valid = parseBlobKey(key);
    if (range) checkRangeShape(range);
    let object: R2ObjectBodyLike | null;
    try {
      object = await this.#bucket.get(
        valid,
        range ? { range: { offset: range.start, length: range.end - range.start + 1 } } : undefined,
      );
    } catch (err) {
      // R2 refuses a range that starts past the end; tell that apart from a real failure.
      const current = range ? await this.head(valid).catch(() => undefined) : undefined;
      if (current === null) return null;
      if (range && current && range.end >= current.size) throw rangeOutside(range, current.size);
      throw ioError("get", err);
    }
    if (!object) return null;
    if (range && range.end >= object.size) {
      await object.body.cancel().catch(noop);
      throw rangeOutside(range, object.size);
    }
    const info = this.#info(object);
    // R2 reads are snapshots: this body keeps the version `get` found, whatever happens to the key.
    return { ...info, body: object.body };
  }

  async head(key: BlobKey): Promise<BlobInfo | null> {
    const valid = parseBlobKey(key);
    const object = await io("head", () => this.#bucket.head(valid));
    return object ? this.#info(object) : null;
  }

  async delete(key: BlobKey): Promise<void> {
    const valid = parseBlobKey(key);
    await io("delete", () => this.#bucket.delete(valid));
  }

  async *list(prefix: string): AsyncGenerator<BlobKey> {
    const validPrefix = parseKeyPrefix(prefix);
    let cursor: string | undefined;
    do {
      const page = await io("list", () => this.#bucket.list({ prefix: validPrefix, cursor, limit: 1000 }));
      for (const { key } of page.objects) {
        // Temp objects and foreign keys (not valid blob keys) are never listed.
        if (key.startsWith(TEMP_PREFIX)) continue;
        const valid = tryParseBlobKey(key);
        if (valid) yield valid;
      }
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }

  async check(): Promise<void> {
    const probe = `${TEMP_PREFIX}probe-${crypto.randomUUID()}`;
    try {
      await this.#bucket.put(probe, new TextEncoder().encode("probe"));
      await this.#bucket.delete(probe);
    } catch (err) {
      throw new StorageError(DRIVER, "IO", `R2 bucket is not writable: ${describe(err)}`, { cause: err });
    }
  }

  /** A HEAD of a key never written: R2 bills a HEAD as a class B operation, a list as class A (about 12 times the price). */
  async probe(): Promise<void> {
    try {
      await this.#bucket.head(`${TEMP_PREFIX}readiness-probe`);
    } catch (err) {
      throw new StorageError(DRIVER, "IO", `R2 bucket does not answer: ${describe(err)}`, { cause: err });
    }
  }

  async owner(): Promise<string | null> {
    const object = await io("read owner marker", () => this.#bucket.get(OWNER_MARKER));
    return object ? decodeOwner(DRIVER, await io("read owner marker", () => object.text())) : null;
  }

  /** A conditional put (`If-None-Match: *`): R2 stores it only if the key is absent, else answers null. */
  async claimOwner(id: string): Promise<string> {
    const bytes = encodeOwner(id);
    const written = await io("record owner marker", () =>
      this.#bucket.put(OWNER_MARKER, bytes, { onlyIf: new Headers({ "If-None-Match": "*" }) }),
    );
    if (written) return id;
    const owner = await this.owner();
    if (owner === null)
      throw new StorageError(DRIVER, "IO", `the owner marker ${OWNER_MARKER} vanished while it was claimed`);
    return owner;
  }

  #info(object: R2ObjectLike): BlobInfo {
    const sha256 = object.customMetadata?.[SHA256_METADATA];
    if (sha256 === undefined || !isSha256Hex(sha256)) {
      throw new StorageError(
        DRIVER,
        "IO",
        `object ${object.key} has no valid sha256 metadata (not written by this driver?)`,
      );
    }
    return { size: object.size, sha256 };
  }

  /** Deletes the temp object of a large upload, if any; failures are left to the `.tmp/` lifecycle rule. */
  async #dropTemp(data: Ingested): Promise<void> {
    if (data.temp) await this.#bucket.delete(data.temp).catch(noop);
  }

  /** Writes ingested content to `key` with its hash as metadata; R2 verifies the hash on single puts. */
  async #store(key: BlobKey, data: Ingested): Promise<void> {
    const { size, sha256 } = data.info;
    const customMetadata = { [SHA256_METADATA]: sha256 };
    if (data.bytes) {
      await io("put", () => this.#bucket.put(key, data.bytes, { customMetadata, sha256 }));
      return;
    }
    const temp = data.temp;
    if (size <= this.#maxSinglePut) {
      // The binding has no server-side copy: stream the temp object into one put (its length is known).
      const source = await io("read temp object", () => this.#bucket.get(temp));
      if (!source) throw new StorageError(DRIVER, "IO", `temp object ${temp} vanished before it was copied`);
      await io("put", () => this.#bucket.put(key, source.body, { customMetadata, sha256 }));
      return;
    }
    const partSize = Math.max(MIN_PART_SIZE, Math.min(this.#maxSinglePut, MAX_COPY_PART));
    const upload = await io("create multipart upload", () =>
      this.#bucket.createMultipartUpload(key, { customMetadata }),
    );
    try {
      const parts: R2UploadedPartLike[] = [];
      for (let offset = 0; offset < size; offset += partSize) {
        const length = Math.min(partSize, size - offset);
        const source = await io("read temp object", () => this.#bucket.get(temp, { range: { offset, length } }));
        if (!source) throw new StorageError(DRIVER, "IO", `temp object ${temp} vanished before it was copied`);
        parts.push(await io("upload part", () => upload.uploadPart(parts.length + 1, source.body)));
      }
      await io("complete multipart upload", () => upload.complete(parts));
    } catch (err) {
      await upload.abort().catch(noop);
      throw err;
    }
  }

  /**
   * Reads `body` to the end, hashing and counting as it goes (each upload awaited before the next
   * read: backpressure). Keeps it in memory if it fits one part, else uploads it to a temp key in
   * parts. On any failure nothing is left behind, and an error of the body itself is rethrown as is.
   */
  async #ingest(body: ReadableStream<Uint8Array>, options: PutOptions): Promise<Ingested> {
    const { maxBytes, expectedSha256 } = options;
    const partSize = this.#partSize;
    const reader = body.getReader();
    const hash = new Sha256();
    let size = 0;
    let part = new Uint8Array(partSize);
    let filled = 0;
    let bodyFinished = false;
    let temp: string | undefined;
    let upload: R2MultipartUploadLike | undefined;
    let completed = false;
    const parts: R2UploadedPartLike[] = [];

    const flush = async (bytes: Uint8Array) => {
      if (!upload) {
        const key = `${TEMP_PREFIX}${crypto.randomUUID()}`;
        upload = await io("create multipart upload", () => this.#bucket.createMultipartUpload(key));
        temp = key;
      }
      const current = upload;
      parts.push(await io("upload part", () => current.uploadPart(parts.length + 1, bytes)));
    };

    try {
      for (;;) {
        const read = await reader.read(); // the body's own error propagates unchanged
        if (read.done) {
          bodyFinished = true;
          break;
        }
        const chunk = read.value;
        checkChunk(chunk);
        checkLimit(DRIVER, maxBytes, size, chunk.byteLength);
        hash.update(chunk);
        size += chunk.byteLength;
        for (let offset = 0; offset < chunk.byteLength; ) {
          // A full part is sent only once more bytes arrive, so a body of exactly one part stays a single put.
          if (filled === partSize) {
            await flush(part);
            part = new Uint8Array(partSize); // the sent buffer is not reused while R2 may still hold it
            filled = 0;
          }
          const n = Math.min(partSize - filled, chunk.byteLength - offset);
          part.set(chunk.subarray(offset, offset + n), filled);
          filled += n;
          offset += n;
        }
      }
      const info = { size, sha256: hash.hex() };
      checkHash(DRIVER, info.sha256, expectedSha256);
      if (!upload) return { info, bytes: part.subarray(0, filled) };
      await flush(part.subarray(0, filled));
      const finished = upload;
      await io("complete multipart upload", () => finished.complete(parts));
      completed = true;
      return { info, temp: temp as string };
    } catch (err) {
      // Stop the producer (e.g. an origin download) instead of leaving it to fill buffers.
      if (!bodyFinished) reader.cancel(err).catch(noop);
      if (upload && !completed) await upload.abort().catch(noop);
      if (temp) await this.#bucket.delete(temp).catch(noop);
      throw err;
    }
  }
}

/**
 * A BlobStore over an R2 bucket binding. Content hashes live in each object's custom metadata
 * (`sha256`). Crashed uploads can leave objects under `.tmp/` and unfinished multipart uploads:
 * add a bucket lifecycle rule deleting `.tmp/` after a day (R2 aborts multipart uploads after 7 days).
 */
export function createR2BlobStore(bucket: R2BucketLike, options: R2BlobStoreOptions = {}): BlobStore {
  return new R2Store(bucket, options);
}
