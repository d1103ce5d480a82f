/**
 * The blob-storage contract every driver (fs, memory, S3, R2, and the cache in front of them) implements, on Web streams so
 * the same interface works on Node, Bun and Workers. Drivers never speak HTTP: a missing blob is
 * `null`, failures are `StorageError`s carrying the driver name.
 */

/** A validated storage key; only `parseBlobKey` (storage/keys.ts) produces one. */
export type BlobKey = string & { readonly __brand: "BlobKey" };

/** Inclusive byte range, already validated against the blob's size by the caller. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobInfo {
  size: number;
  /** Lowercase hex SHA-256 of the content. */
  sha256: string;
}

/** `size` and `sha256` always describe the whole blob, also for a range read (for Content-Range). */
export interface BlobObject extends BlobInfo {
  /** The requested range (or whole blob), streamed. */
  body: ReadableStream<Uint8Array>;
  /**
   * The same bytes, when the driver already holds them in memory (the small-blob cache). Callers
   * may answer with them directly instead of the stream: a Uint8Array response body skips the Web
   * stream machinery, which dominates the cost of serving small files. A driver that sets `bytes`
   * creates `body` only when it is read, so a caller answering with `bytes` need not cancel it.
   */
  bytes?: Uint8Array<ArrayBuffer>;
}

/**
 * A blob opened for positional reads (`BlobStore.openFile`): what a server needs to send bytes
 * straight from storage into a socket, without a stream. `size` and `sha256` describe the whole blob.
 */
export interface BlobFile extends BlobInfo {
  /**
   * Reads up to `length` bytes of content starting at content offset `position` into `into` at
   * `offset`, then calls `done` with the count read (0 only past the end) or a StorageError IO.
   * A callback, not a promise: a large download calls it thousands of times a second, and every
   * promise is garbage that grows the young generation (≈ 7 KB per 512 KiB chunk with promises,
   * ≈ 3 KB with callbacks: half the scavenges, and a peak RSS of 81–88 MiB for a 256 MiB download).
   * `done` may run before `read` returns (a driver may read small lengths synchronously).
   */
  read(
    into: Uint8Array,
    offset: number,
    length: number,
    position: number,
    done: (err: Error | null, bytesRead: number) => void,
  ): void;
  /** Gives the file back. Call it exactly once, on every path (end, error, client gone). */
  release(): void;
}

/** See `BlobStore.localFile`. */
export interface LocalBlobFile {
  path: string;
  offset: number;
  size: number;
}

export interface PutOptions {
  /** Refuse (and discard) the upload once more than this many bytes arrive. */
  maxBytes?: number;
  /** If given, the put fails unless the content hashes to this value. */
  expectedSha256?: string;
  /**
   * putContentAddressed only: called with the derived key once the content is in, before the store
   * checks whether that blob already exists. The blob collector's reservation (services/blob-collector.ts).
   */
  reserve?: (key: BlobKey) => Promise<void>;
  /**
   * false: a cache's write (image derivatives), made again at will. Still atomic, but it need not
   * reach the disk before the put resolves (the fs driver skips its fsyncs, which wait behind every
   * other process's unwritten data), so a crash of the machine may lose it; a store never serves
   * what such a crash left of it (the fs driver hashes one it did not write before first use).
   * Default true.
   */
  durable?: boolean;
}

export interface BlobStore {
  readonly driver: string;
  /**
   * Stores the stream under `key` atomically: readers see the old blob, or the complete new one,
   * never part of it. Resolves once the data is durable (unless `durable: false`). On any error
   * nothing is left behind.
   */
  put(key: BlobKey, body: ReadableStream<Uint8Array>, options?: PutOptions): Promise<BlobInfo>;
  /**
   * Stores a stream whose hash is not known in advance under a key derived from its content:
   * `keyFor(info)` is called once the bytes are in and hashed (it is synchronous: precompute the
   * tenant part with `tenantPrefix` and use `contentKeyUnder`). Used for content-addressed blobs.
   * If a blob already exists at that key it is kept (identical content) and the upload is dropped.
   */
  putContentAddressed(
    body: ReadableStream<Uint8Array>,
    keyFor: (info: BlobInfo) => BlobKey,
    options?: PutOptions,
  ): Promise<BlobInfo & { key: BlobKey; created: boolean }>;
  /** Null when missing. The body reflects the blob as it was when `get` resolved, even if overwritten later. */
  get(key: BlobKey, range?: ByteRange): Promise<BlobObject | null>;
  head(key: BlobKey): Promise<BlobInfo | null>;
  /**
   * The whole blob's bytes if this store holds them in memory right now (the small-blob cache),
   * without any I/O; otherwise undefined. Callers only read them. Optional: most drivers have none.
   */
  peek?(key: BlobKey): Uint8Array<ArrayBuffer> | undefined;
  /**
   * The blob opened for positional reads, or null when missing; reflects the blob as it was when
   * it resolves. Optional: only drivers with local files have it (fs), and only the Node runtime
   * uses it (src/runtime/node/fast-get.ts). Wrappers pass it through.
   */
  openFile?(key: BlobKey): Promise<BlobFile | null>;

  /**
   * Where the blob's content lies in a local file, for a runtime that can send a file itself (Bun's
   * `Bun.file(path).slice`): bytes `offset` … `offset + size - 1` of `path`. Null when missing.
   * Optional: only the fs driver has one. Content-addressed files never change once written; a
   * caller must still compare `size` with what it expects (a damaged volume).
   */
  localFile?(key: BlobKey): Promise<LocalBlobFile | null>;
  /** Missing is not an error. */
  delete(key: BlobKey): Promise<void>;
  /**
   * Every key starting with `prefix` (for sweeping unreferenced blobs), in no particular order.
   * The prefix may stop mid-segment; an invalid one rejects with INVALID_KEY on first iteration.
   */
  list(prefix: string): AsyncIterable<BlobKey>;
  /** Throws if the store cannot be written (start-up). Writes (and removes) a probe. */
  check(): Promise<void>;
  /**
   * Throws if the store does not answer one cheap read of its root (a stat, a one-key list, a HEAD);
   * writes nothing. For readiness probes, which may come every few seconds.
   */
  probe(): Promise<void>;
  /**
   * The deployment recorded as this store's owner (storage/drivers/utils/owner-marker.ts), or null when none is.
   * A store belongs to one metadata database: services/store-owner.ts decides at start-up.
   */
  owner(): Promise<string | null>;
  /**
   * Records `id` as the owner unless one is recorded already, atomically (create-if-absent: of any
   * number of racing claims, from any number of processes, exactly one is written, whole), and
   * answers the owner now recorded: `id`, or the one that was there first. RangeError for an id
   * that is not a plain token (drivers/utils/owner-marker.ts).
   */
  claimOwner(id: string): Promise<string>;
  /** Presigned URLs and server-side copies: S3-compatible stores only (see DirectStorage). */
  readonly direct?: DirectStorage;
}

/** A presigned PUT: the client sends exactly the signed size with every header in `headers` to `url`. */
export interface PresignedPut {
  url: string;
  headers: Record<string, string>;
}

/** Headers the bucket answers a presigned GET with (S3's `response-*` overrides). */
export interface ResponseOverrides {
  contentType: string;
  contentDisposition?: string;
  cacheControl?: string;
}

/**
 * Bytes straight to and from the bucket (docs/direct-storage.md): presigned URLs that bypass the
 * service, and the server-side operations that finish such an upload. Only object stores with an
 * S3 API have it; on the others the service hosts the upload URL itself.
 */
export interface DirectStorage {
  /**
   * The origin (scheme, host, port) of every URL this storage presigns: the bucket's, path-style or
   * virtual-hosted as it signs them. A browser page that sends to those URLs lists it in its CSP.
   */
  readonly origin: string;
  /** A PUT of exactly `size` bytes hashing to `sha256` into `key`, valid `expiresInSeconds`. */
  presignPut(key: BlobKey, upload: { size: number; sha256: string; expiresInSeconds: number }): Promise<PresignedPut>;
  /** A GET of `key` valid `expiresInSeconds`, answered with `overrides`. */
  presignGet(key: BlobKey, expiresInSeconds: number, overrides: ResponseOverrides): Promise<string>;
  /** Copies `from` to `to` inside the bucket (no bytes through the service); the object's metadata stays. */
  copy(from: BlobKey, to: BlobKey): Promise<void>;
  /**
   * Whether the engine itself refused a presigned PUT whose bytes did not match its signed SHA-256,
   * found out once by trying (a small probe object under the driver's bookkeeping prefix).
   */
  enforcesSignedSha256(): Promise<boolean>;
}

/** NO_SPACE: the volume is full (ENOSPC, EDQUOT) or the bucket refuses to store more (quota, 507). */
export type StorageErrorCode = "INVALID_KEY" | "TOO_LARGE" | "HASH_MISMATCH" | "IO" | "ABORTED" | "NO_SPACE";

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  constructor(driver: string, code: StorageErrorCode, message: string, options?: { cause?: unknown }) {
    super(`[${driver}] ${message}`, options);
    this.name = "StorageError";
    this.code = code;
  }
}
