/**
 * The error model: stable problem codes, one table from code to HTTP status, and one renderer of
 * RFC 9457 `application/problem+json` documents. Every layer above storage throws `ProblemError`.
 */

export const PROBLEMS = {
  VALIDATION_FAILED: { status: 400, title: "Request validation failed" },
  UNAUTHENTICATED: { status: 401, title: "Authentication required" },
  FORBIDDEN: { status: 403, title: "Forbidden" },
  NOT_FOUND: { status: 404, title: "Not found" },
  /** getData `?v=` names no revision of the resource (issue 28). */
  VERSION_NOT_FOUND: { status: 404, title: "Version not found" },
  METHOD_NOT_ALLOWED: { status: 405, title: "Method not allowed" },
  CONFLICT: { status: 409, title: "Conflict" },
  /**
   * The change needs a live lock of the caller and there is none: never locked, expired, released,
   * or the lockID/owner do not match.
   */
  LOCK_NOT_HELD: { status: 409, title: "Lock not held" },
  PRECONDITION_FAILED: { status: 412, title: "Precondition failed" },
  PAYLOAD_TOO_LARGE: { status: 413, title: "Payload too large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: "Unsupported media type" },
  RANGE_NOT_SATISFIABLE: { status: 416, title: "Range not satisfiable" },
  /** tus checksum extension: the PATCH body does not hash to its Upload-Checksum (nothing of it kept). */
  CHECKSUM_MISMATCH: { status: 460, title: "Checksum mismatch" },
  /** Someone else holds a live lock on the resource (RFC 4918 §11.3), or the caller already does. */
  LOCKED: { status: 423, title: "Locked" },
  /** Node's HTTP layer: the request line and headers took longer than the server allows. */
  REQUEST_TIMEOUT: { status: 408, title: "Request timeout" },
  /** Node's HTTP layer: the request line and headers are over its limit (16 KiB by default). */
  HEADERS_TOO_LARGE: { status: 431, title: "Request header fields too large" },
  /** The external URI points somewhere we refuse to fetch from (SSRF policy, scheme, credentials). */
  ORIGIN_REFUSED: { status: 422, title: "External URI refused" },
  /**
   * The content received does not hash to the SHA-256 the client (expectedSha256, Repr-Digest,
   * Content-Digest) or the origin (Repr-Digest) announced; nothing was stored.
   */
  DIGEST_MISMATCH: { status: 422, title: "Content digest mismatch" },
  /** A direct upload's stored object is not the size createUploadURL declared. */
  SIZE_MISMATCH: { status: 422, title: "Content size mismatch" },
  /** completeUpload before the upload's bytes arrived. */
  UPLOAD_INCOMPLETE: { status: 409, title: "Upload incomplete" },
  /** getData image parameters on content that is no raster image we decode: SVG (never rasterised), a non-image, a corrupt file. */
  NOT_TRANSFORMABLE: { status: 422, title: "Content cannot be transformed" },
  /** The source image's header declares more pixels than CMS_IMAGE_MAX_PIXELS; refused before decoding. */
  IMAGE_TOO_LARGE: { status: 422, title: "Image too large to transform" },
  /** Image parameters where no transformer runs (Workers without an Images binding); plain getData still works. */
  TRANSFORM_UNAVAILABLE: { status: 501, title: "Image transforms unavailable" },
  /** The origin answered, but not with usable content (4xx/5xx, too many redirects, too large). */
  ORIGIN_FAILED: { status: 502, title: "External URI could not be fetched" },
  ORIGIN_TIMEOUT: { status: 504, title: "External URI timed out" },
  UNAVAILABLE: { status: 503, title: "Service unavailable" },
  /** Another process or instance held the database's write lock for longer than CMS_DB_BUSY_TIMEOUT_MS; retry later. */
  DATABASE_BUSY: { status: 503, title: "Database busy" },
  /**
   * The metadata database cannot be used right now: its server is unreachable or failing, or its
   * file cannot be read or written. Retry-After says when to try again; the outage is logged once.
   */
  DATABASE_UNAVAILABLE: { status: 503, title: "Database unavailable" },
  /**
   * Workers: the blob store (the BLOBS bucket) belongs to another deployment (another metadata
   * database), so this one serves nothing until it gets its own (services/store-owner.ts).
   */
  STORE_OWNED_ELSEWHERE: { status: 503, title: "Blob store belongs to another deployment" },
  /** The volume or bucket refused to store more (disk full, quota); nothing of the request was kept. */
  INSUFFICIENT_STORAGE: { status: 507, title: "Insufficient storage" },
  /** A tenant quota (bytes, resources, ingress per day) would be exceeded; nothing was stored. */
  QUOTA_EXCEEDED: { status: 507, title: "Quota exceeded" },
  INTERNAL: { status: 500, title: "Internal server error" },
  /**
   * A resource's row names a blob the store does not hold (deleted behind the service's back, e.g.
   * by another deployment pointed at the same store): the server lost data, so a 5xx, never a 404
   * that would tell clients and caches the resource is gone while it is still listed. After
   * INTERNAL: the OpenAPI document describes a status by its first code.
   */
  BLOB_MISSING: { status: 500, title: "Stored content missing" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof PROBLEMS;

/** One offending input: a JSON Pointer into the request (`/body/resourceName`, `/params/uid`) and why. */
export interface FieldError {
  pointer: string;
  detail: string;
}

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors?: FieldError[];
  readonly headers?: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = "ProblemError";
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

export const isProblemError = (err: unknown): err is ProblemError => err instanceof ProblemError;

/** `type` URIs are relative references resolved against the service, documented in the README. */
export const problemType = (code: ProblemCode) => `/problems/${code.toLowerCase().replaceAll("_", "-")}`;

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code: ProblemCode;
  requestId?: string;
  errors?: FieldError[];
}

export function toProblemDocument(err: ProblemError, instance?: string, requestId?: string): ProblemDocument {
  const { title, status } = PROBLEMS[err.code];
  return {
    type: problemType(err.code),
    title,
    status,
    detail: err.message,
    ...(instance ? { instance } : {}),
    code: err.code,
    ...(requestId ? { requestId } : {}),
    ...(err.errors?.length ? { errors: err.errors } : {}),
  };
}

/** Renders a problem as a Fetch `Response`; usable from any layer that answers HTTP. */
export function problemResponse(err: ProblemError, instance?: string, requestId?: string): Response {
  const doc = toProblemDocument(err, instance, requestId);
  return new Response(JSON.stringify(doc), {
    status: doc.status,
    headers: { "content-type": "application/problem+json", "cache-control": "no-store", ...err.headers },
  });
}
