/**
 * Serves a stored blob over HTTP with RFC 9110 semantics: validators, conditional requests (§13,
 * preconditions.ts) and single or multipart byte ranges (§14, range.ts and byteranges.ts). Fetch
 * primitives only: runs on Node, Bun and Workers.
 */
import { ProblemError } from "../problems.js";
import type { ByteRange } from "../storage/blob-store.js";
import type { BlobEntity, OpenBlob } from "./blob-entity.js";
import { type Multipart, multipartByteranges } from "./byteranges.js";
import { contentDisposition } from "./content-disposition.js";
import { sha256DigestField, wantsSha256 } from "../lib/digest-fields.js";
import { parseETag } from "./etag.js";
import { formatHttpDate } from "./http-date.js";
import { evaluatePreconditions, ifRangeAllows } from "./preconditions.js";
import { CONTENT_VARY } from "./cache-policy.js";
import { CONTENT_CORS_HEADERS } from "./middleware/cors.js";
import { contentRange, parseRange, unsatisfiedRange, type RangeResult } from "./range.js";

/**
 * Used unless the entity or `extraHeaders` sets Cache-Control (cache-policy.ts): any cache may keep
 * only a private copy and must revalidate each use, which is cheap (304 via ETag) and never serves
 * content after access changes.
 */
export const DEFAULT_CACHE_CONTROL = "private, no-cache";

// Headers a 304 must carry if a 200 would have (§15.4.5), plus Last-Modified for revalidation.
const NOT_MODIFIED_HEADERS = ["cache-control", "content-location", "date", "etag", "expires", "last-modified", "vary"];

/** Response header fields by lowercase name. */
export type ResponseHeaders = Record<string, string>;

/**
 * How to answer a GET or HEAD for an entity, decided from the request's header fields alone — the
 * whole of RFC 9110 §13–14 with no I/O, so every way of sending a response shares it.
 */
export type BlobAnswer =
  | { status: 200 | 304; headers: ResponseHeaders; range?: undefined; multipart?: undefined }
  | { status: 206; headers: ResponseHeaders; range: ByteRange; multipart?: undefined }
  | { status: 206; headers: ResponseHeaders; range?: undefined; multipart: Multipart };

/**
 * Decides the answer for `method` (GET or HEAD) on `entity`. 412 and 416 are thrown as
 * `ProblemError`s for the app's problem renderer. `extraHeaders` (names in any case) override the
 * defaults (Cache-Control, Content-Disposition…) but never the framing headers (Content-Length,
 * Content-Range, multipart Content-Type). A GET sends the body of a 200 or 206; HEAD and 304 never do.
 */
export function answerBlob(
  method: string,
  requestHeader: (name: string) => string | null | undefined,
  entity: BlobEntity,
  extraHeaders?: ResponseHeaders,
): BlobAnswer {
  if (method !== "GET" && method !== "HEAD") {
    throw new ProblemError("METHOD_NOT_ALLOWED", `${method} is not supported here`, {
      headers: { allow: "GET, HEAD" },
    });
  }
  const etag = parseETag(entity.etag);
  if (!etag) throw new TypeError(`entity.etag is not a quoted entity-tag: ${entity.etag}`);
  const lastModified = Number.isFinite(entity.lastModified.getTime())
    ? Math.floor(entity.lastModified.getTime() / 1000) * 1000 // HTTP-dates have second precision
    : undefined;
  // A frozen entity's fields are shared by its answers: copied below before they are changed.
  const shared = extraHeaders ? undefined : keptHeaders(entity, lastModified);
  const own = shared ?? representationHeaders(entity, lastModified, extraHeaders);

  const outcome = evaluatePreconditions(requestHeader, etag, lastModified);
  if (outcome.kind === "failed") {
    throw new ProblemError("PRECONDITION_FAILED", outcome.detail, { headers: { etag: entity.etag } });
  }
  if (outcome.kind === "not-modified") {
    const notModified: ResponseHeaders = {};
    for (const name of NOT_MODIFIED_HEADERS) {
      const value = own[name];
      if (value !== undefined) notModified[name] = value;
    }
    return { status: 304, headers: notModified };
  }
  const headers = shared ? { ...shared } : own;

  // Range handling is defined for GET only; a server MUST ignore it on other methods (§14.2), HEAD included.
  const rangeHeader = method === "GET" ? (requestHeader("range") ?? null) : null;
  const ranges: RangeResult =
    rangeHeader !== null && ifRangeAllows(requestHeader("if-range") ?? null, etag, lastModified)
      ? parseRange(rangeHeader, entity.size)
      : { kind: "ignore", reason: "absent" };

  if (ranges.kind === "unsatisfiable") {
    throw new ProblemError("RANGE_NOT_SATISFIABLE", `No requested range overlaps the ${entity.size} bytes available`, {
      headers: { "content-range": unsatisfiedRange(entity.size), etag: entity.etag },
    });
  }
  if (ranges.kind === "ignore") {
    headers["content-length"] = String(entity.size);
    // The content is the whole representation (no content coding), so its digest is known for free;
    // a range's would need hashing the bytes first, so it is left out (RFC 9530 lets us).
    const digest = headers["repr-digest"];
    if (digest && wantsSha256(requestHeader("want-content-digest"))) headers["content-digest"] = digest;
    return { status: 200, headers };
  }
  const [first, ...rest] = ranges.ranges;
  if (first && rest.length === 0) {
    headers["content-range"] = contentRange(first, entity.size);
    headers["content-length"] = String(first.end - first.start + 1);
    return { status: 206, headers, range: first };
  }
  const multipart = multipartByteranges(ranges.ranges, entity.size, safeMediaType(entity.contentType));
  headers["content-type"] = `multipart/byteranges; boundary=${multipart.boundary}`;
  headers["content-length"] = String(multipart.length);
  return { status: 206, headers, multipart };
}

/** Answers GET or HEAD for `entity` with a Web Response (see `answerBlob`). */
export async function serveBlob(
  request: Request,
  entity: BlobEntity,
  open: OpenBlob,
  extraHeaders?: ResponseHeaders,
): Promise<Response> {
  const answer = answerBlob(request.method, (name) => request.headers.get(name), entity, extraHeaders);
  const { status, range, multipart } = answer;
  // Which headers a script may read: the CORS middleware adds the origin and keeps this list.
  const headers = {
    ...answer.headers,
    "access-control-expose-headers": CONTENT_CORS_HEADERS["access-control-expose-headers"],
  };
  const send = request.method === "GET" && status !== 304;
  if (multipart) return new Response(send ? multipart.stream(open) : null, { status, headers });
  // An empty blob has nothing to stream, so storage isn't touched.
  const body = send && (range || entity.size > 0) ? await open(range) : null;
  return new Response(body, { status, headers });
}

/** Representation headers of frozen entities (the content service's answers for cached rows), built once each. */
const kept = new WeakMap<BlobEntity, ResponseHeaders>();
/**
 * A frozen entity's own header fields, built once and kept (undefined for an entity that is not
 * frozen): built per request, the date, digest, disposition and policy fields were 10 % of a
 * random-range GET's CPU on Bun (Repr-Digest 5.3 %, Last-Modified 3 %); kept per entity, with the
 * one-regex range parse, Bun's range handler took 23–26 µs instead of 36–45. Looked up before
 * asking Object.isFrozen, which walks every field (only frozen entities are kept). Shared: copy
 * before changing.
 */
function keptHeaders(entity: BlobEntity, lastModified: number | undefined): ResponseHeaders | undefined {
  let headers = kept.get(entity);
  if (!headers && Object.isFrozen(entity)) {
    headers = representationHeaders(entity, lastModified);
    kept.set(entity, headers);
  }
  return headers;
}

function representationHeaders(
  entity: BlobEntity,
  lastModified: number | undefined,
  extra?: ResponseHeaders,
): ResponseHeaders {
  const headers: ResponseHeaders = {
    "accept-ranges": "bytes",
    etag: entity.etag,
    "content-type": safeMediaType(entity.contentType),
    "content-disposition": contentDisposition(entity.filename, entity.disposition ?? "inline"),
    "x-content-type-options": "nosniff",
    "cache-control": entity.cacheControl ?? DEFAULT_CACHE_CONTROL,
    vary: CONTENT_VARY,
  };
  if (entity.link) headers.link = entity.link;
  if (entity.contentSecurityPolicy) headers["content-security-policy"] = entity.contentSecurityPolicy;
  if (lastModified !== undefined) headers["last-modified"] = formatHttpDate(new Date(lastModified));
  // Always sent (we store SHA-256), so Want-Repr-Digest needs no answer of its own.
  if (entity.sha256 && /^[0-9a-f]{64}$/.test(entity.sha256)) headers["repr-digest"] = sha256DigestField(entity.sha256);
  if (extra) for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
  return headers;
}

/** A stored media type goes into multipart part headers verbatim, so it must be one clean header value. */
function safeMediaType(value: string): string {
  return /^[\x21-\x7e][\x20-\x7e]*$/.test(value) ? value : "application/octet-stream";
}
