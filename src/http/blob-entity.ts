/** What serving a blob needs to know about it, and how its bytes are opened (only when content is sent). */
import type { ByteRange } from "../storage/blob-store.js";
import type { DispositionType } from "./content-disposition.js";

export interface BlobEntity {
  size: number;
  /** Strong, already quoted, e.g. `"\"abc\""`. */
  etag: string;
  lastModified: Date;
  contentType: string;
  filename: string;
  /** Lowercase hex SHA-256 of the whole content: sent as `Repr-Digest` (RFC 9530). */
  sha256?: string;
  /** How a browser shows it (default inline). */
  disposition?: DispositionType;
  /** Sent as Content-Security-Policy, on every answer that carries the representation's headers. */
  contentSecurityPolicy?: string;
  /** Cache-Control (cache-policy.ts); DEFAULT_CACHE_CONTROL when unset. */
  cacheControl?: string;
  /** Sent as Link: the versioned URL of this content, from a mutable one. */
  link?: string;
}

/** Opens the blob, or just `range` of it: a stream, or bytes already in memory. Only called when content is sent. */
export type OpenBlob = (range?: ByteRange) => Promise<ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>>;
