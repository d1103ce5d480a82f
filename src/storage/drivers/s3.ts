/**
 * S3-compatible blob driver (AWS S3, R2's S3 API, MinIO, s3rver) on `fetch` + SigV4 (aws4fetch), so
 * it runs on Node, Bun and Workers. The content hash lives in object metadata (`x-amz-meta-sha256`).
 */
import { StorageError, type BlobStore, type DirectStorage } from "../blob-store.js";
import { parseKeyPrefix } from "../keys.js";
import { S3Client, TEMP_PREFIX, type FetchLike } from "./s3/client.js";
import { createS3Direct } from "./s3/direct.js";
import { DRIVER } from "./s3/errors.js";
import { S3Store } from "./s3/store.js";

export { DRIVER };
export { S3ResponseError } from "./s3/errors.js";
export { MAX_OBJECT_BYTES } from "./s3/stage.js";
export type { FetchLike };

const MiB = 1024 * 1024;
/** S3's minimum part size (all parts but the last) and maximum (https://docs.aws.amazon.com/AmazonS3/latest/userguide/qfacts.html). */
const MIN_PART_BYTES = 5 * MiB;
const MAX_PART_BYTES = 5 * 1024 * MiB;

export interface S3BlobStoreOptions {
  /**
   * Base URL of the S3 API, e.g. `http://127.0.0.1:4569`, `https://s3.eu-west-1.amazonaws.com` or
   * `https://<account>.r2.cloudflarestorage.com`. May include a path; must not include credentials.
   */
  endpoint: string;
  bucket: string;
  /** SigV4 signing region. Default: `auto` for R2 endpoints (`*.r2.cloudflarestorage.com`), else `us-east-1`. */
  region?: string;
  accessKeyId: string;
  /** Used only to sign requests: never logged, never part of an error message. */
  secretAccessKey: string;
  /** For temporary (STS) credentials; treated as secret like `secretAccessKey`. */
  sessionToken?: string;
  /**
   * `<endpoint>/<bucket>/<key>` URLs instead of virtual-hosted `<bucket>.<host>/<key>`. Default: true,
   * which MinIO, s3rver, R2 and (for dot-free names) AWS accept; set false for AWS buckets created
   * without path-style access or endpoints that only do virtual hosting.
   */
  forcePathStyle?: boolean;
  /**
   * Prepended to every key, so one bucket can hold several stores (e.g. `blobs/`). Empty or a valid
   * key prefix ending in `/`. Default: "". Temp objects go to `<prefix>.tmp/`; give that a lifecycle
   * rule (expire after a day, abort incomplete multipart uploads) to sweep leftovers of crashes.
   */
  prefix?: string;
  /**
   * Multipart part size. A body smaller than this is buffered and sent as one PutObject; a larger one
   * streams as parts of this size. Default: 8 MiB. S3 requires at least 5 MiB (all parts but the
   * last) and allows at most 5 GiB. Memory per upload: about (maxConcurrentParts + 1) × this.
   */
  partSizeBytes?: number;
  /**
   * UploadPart requests in flight per upload while the next part is read. Default: 1 (reading
   * overlaps one upload; peak memory about two parts). Raise it for throughput on fast links.
   */
  maxConcurrentParts?: number;
  /** Retries of network errors, 429 and 5xx answers, with jittered exponential backoff. Default: 2. */
  retries?: number;
  /** The fetch to send requests through. Default: the global `fetch` (tests inject a recording one). */
  fetch?: FetchLike;
}

const invalidOption = (message: string) => new StorageError(DRIVER, "IO", `invalid options: ${message}`);

function intOption(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  const n = value ?? fallback;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw invalidOption(`${name} must be an integer in [${min}, ${max}]`);
  return n;
}

/**
 * Creates an S3 blob store. Validates options (StorageError IO "invalid options") but makes no
 * request: call `check()` at start-up to verify endpoint, bucket and credentials.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore {
  const { client, prefix } = s3Client(options);
  return new S3Store(client, {
    prefix,
    partSizeBytes: intOption("partSizeBytes", options.partSizeBytes, 8 * MiB, MIN_PART_BYTES, MAX_PART_BYTES),
    maxConcurrentParts: intOption("maxConcurrentParts", options.maxConcurrentParts, 1, 1, 16),
  });
}

/**
 * Only the presigned URLs of a bucket another driver reads and writes (R2's S3 API beside the R2
 * binding): the same objects as `createS3BlobStore(options).direct`, without the store's code, which
 * a Worker would otherwise carry for nothing.
 */
export function createS3DirectStorage(options: S3BlobStoreOptions): DirectStorage {
  const { client, prefix } = s3Client(options);
  return createS3Direct(client, prefix, TEMP_PREFIX);
}

function s3Client(options: S3BlobStoreOptions): { client: S3Client; prefix: string } {
  let endpoint: URL;
  try {
    endpoint = new URL(options.endpoint);
  } catch {
    throw invalidOption("endpoint is not a URL");
  }
  if (endpoint.protocol !== "http:" && endpoint.protocol !== "https:") throw invalidOption("endpoint must be http(s)");
  if (endpoint.username || endpoint.password) throw invalidOption("endpoint must not contain credentials");
  if (endpoint.search || endpoint.hash) throw invalidOption("endpoint must not have a query or fragment");
  if (!options.bucket) throw invalidOption("bucket is required");
  if (!options.accessKeyId || !options.secretAccessKey)
    throw invalidOption("accessKeyId and secretAccessKey are required");
  const prefix = options.prefix ?? "";
  if (prefix !== "" && (!prefix.endsWith("/") || !isValidPrefix(prefix))) {
    throw invalidOption("prefix must be empty or a valid key prefix ending in '/'");
  }
  const client = new S3Client({
    endpoint,
    bucket: options.bucket,
    region: options.region ?? (endpoint.hostname.endsWith(".r2.cloudflarestorage.com") ? "auto" : "us-east-1"),
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    sessionToken: options.sessionToken,
    forcePathStyle: options.forcePathStyle ?? true,
    fetch: options.fetch ?? ((request) => fetch(request)),
    retries: intOption("retries", options.retries, 2, 0, 10),
  });
  return { client, prefix };
}

function isValidPrefix(prefix: string): boolean {
  try {
    parseKeyPrefix(prefix);
    return true;
  } catch {
    return false;
  }
}
