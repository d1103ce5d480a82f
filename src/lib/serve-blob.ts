/**
 * Serves a stored blob over HTTP with RFC 9110 semantics: validators, conditional requests (§13)
 * and single or multipart byte ranges (§14). Fetch primitives only: runs on Node, Bun and Workers.
 */
import { ProblemError } from "../errors.js";
import type { ByteRange } from "../storage/blob-store.js";
import { contentDisposition, type DispositionType } from "./content-disposition.js";
import { sha256DigestField, wantsSha256 } from "./digest-fields.js";
import { contentRange, parseRange, unsatisfiedRange, type RangeResult } from "./http-range.js";

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
}

/** Opens the blob, or just `range` of it: a stream, or bytes already in memory. Only called when content is sent. */
export type OpenBlob = (range?: ByteRange) => Promise<ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>>;

const toStream = (body: ReadableStream<Uint8Array> | Uint8Array): ReadableStream<Uint8Array> =>
  body instanceof Uint8Array
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          if (body.byteLength > 0) controller.enqueue(body.slice());
          controller.close();
        },
      })
    : body;

/**
 * Used unless `extraHeaders` sets Cache-Control: any cache may keep only a private copy and must
 * revalidate each use, which is cheap (304 via ETag) and never serves content after access changes.
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
    throw new ProblemError("METHOD_NOT_ALLOWED", `${method} is not supported here`, { headers: { allow: "GET, HEAD" } });
  }
  const etag = parseETag(entity.etag);
  if (!etag) throw new TypeError(`entity.etag is not a quoted entity-tag: ${entity.etag}`);
  const lastModified = Number.isFinite(entity.lastModified.getTime())
    ? Math.floor(entity.lastModified.getTime() / 1000) * 1000 // HTTP-dates have second precision
    : undefined;
  const headers = representationHeaders(entity, lastModified, extraHeaders);

  const outcome = evaluatePreconditions(requestHeader, etag, lastModified);
  if (outcome.kind === "failed") {
    throw new ProblemError("PRECONDITION_FAILED", outcome.detail, { headers: { etag: entity.etag } });
  }
  if (outcome.kind === "not-modified") {
    const kept: ResponseHeaders = {};
    for (const name of NOT_MODIFIED_HEADERS) {
      const value = headers[name];
      if (value !== undefined) kept[name] = value;
    }
    return { status: 304, headers: kept };
  }

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
  const { status, headers, range, multipart } = answerBlob(request.method, (name) => request.headers.get(name), entity, extraHeaders);
  const send = request.method === "GET" && status !== 304;
  if (multipart) return new Response(send ? multipart.stream(open) : null, { status, headers });
  // An empty blob has nothing to stream, so storage isn't touched.
  const body = send && (range || entity.size > 0) ? await open(range) : null;
  return new Response(body, { status, headers });
}

function representationHeaders(entity: BlobEntity, lastModified: number | undefined, extra?: ResponseHeaders): ResponseHeaders {
  const headers: ResponseHeaders = {
    "accept-ranges": "bytes",
    etag: entity.etag,
    "content-type": safeMediaType(entity.contentType),
    "content-disposition": contentDisposition(entity.filename, entity.disposition ?? "inline"),
    "x-content-type-options": "nosniff",
    "cache-control": DEFAULT_CACHE_CONTROL,
  };
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

// ---- Conditional requests (RFC 9110 §13) ----

interface ETag {
  weak: boolean;
  opaque: string;
}

type Outcome = { kind: "proceed" } | { kind: "not-modified" } | { kind: "failed"; detail: string };

const ETAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;
// One element of a `#entity-tag` list; empty elements are allowed (§5.6.1). Sticky, so it scans.
const ETAG_ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|$)/y;

function parseETag(value: string): ETag | undefined {
  const match = ETAG.exec(value.trim());
  return match ? { weak: match[1] !== undefined, opaque: match[2] ?? "" } : undefined;
}

/** `*`, or the list's entity-tags; a malformed list yields no tags (so it matches nothing). */
function parseETagList(value: string): "*" | ETag[] {
  if (value.trim() === "*") return "*";
  const tags: ETag[] = [];
  let index = 0;
  while (index < value.length) {
    ETAG_ELEMENT.lastIndex = index;
    const match = ETAG_ELEMENT.exec(value);
    if (!match || ETAG_ELEMENT.lastIndex === index) return [];
    if (match[2] !== undefined) tags.push({ weak: match[1] !== undefined, opaque: match[2] });
    index = ETAG_ELEMENT.lastIndex;
  }
  return tags;
}

// §8.8.3.2: strong comparison needs both tags strong; weak comparison ignores the W/ flag.
const strongMatch = (a: ETag, b: ETag) => !a.weak && !b.weak && a.opaque === b.opaque;
const weakMatch = (a: ETag, b: ETag) => a.opaque === b.opaque;

function listMatches(value: string, current: ETag, compare: (a: ETag, b: ETag) => boolean): boolean {
  const list = parseETagList(value);
  return list === "*" || list.some((tag) => compare(tag, current));
}

/** Whether an If-None-Match value matches `etag` (a quoted entity-tag): §13.1.2's weak comparison. */
export function ifNoneMatchHits(value: string | null | undefined, etag: string): boolean {
  const current = parseETag(etag);
  return value != null && current !== undefined && listMatches(value, current, weakMatch);
}

/** §13.2.2 steps 1–4, in order. Only GET and HEAD reach here, so a matching If-None-Match is a 304. */
function evaluatePreconditions(
  header: (name: string) => string | null | undefined,
  etag: ETag,
  lastModified: number | undefined,
): Outcome {
  const ifMatch = header("if-match") ?? null;
  if (ifMatch !== null) {
    if (!listMatches(ifMatch, etag, strongMatch)) return { kind: "failed", detail: "If-Match does not match the current ETag" };
  } else {
    // §13.1.4: only consulted without If-Match; an invalid date is ignored.
    const since = parseHttpDate(header("if-unmodified-since"));
    if (since && lastModified !== undefined && lastModified > since.getTime()) {
      return { kind: "failed", detail: "The resource was modified after If-Unmodified-Since" };
    }
  }
  const ifNoneMatch = header("if-none-match") ?? null;
  if (ifNoneMatch !== null) {
    if (listMatches(ifNoneMatch, etag, weakMatch)) return { kind: "not-modified" };
  } else {
    // §13.1.3: only consulted without If-None-Match; an invalid date (or a list of them) is ignored.
    const since = parseHttpDate(header("if-modified-since"));
    if (since && lastModified !== undefined && lastModified <= since.getTime()) return { kind: "not-modified" };
  }
  return { kind: "proceed" };
}

/** §13.1.5: Range applies only if If-Range is absent, strongly matches the ETag, or exactly equals Last-Modified. */
function ifRangeAllows(value: string | null, etag: ETag, lastModified: number | undefined): boolean {
  if (value === null) return true;
  const trimmed = value.trim();
  if (trimmed.startsWith('"') || trimmed.startsWith("W/")) {
    const tag = parseETag(trimmed);
    return tag !== undefined && strongMatch(tag, etag);
  }
  const date = parseHttpDate(trimmed);
  return date !== undefined && lastModified !== undefined && date.getTime() === lastModified;
}

// ---- HTTP-date (RFC 9110 §5.6.7) ----

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/**
 * Parses the three HTTP-date forms exactly (not `Date.parse`, whose leniency differs between
 * engines); anything else is `undefined`, which callers treat as "field absent" as §13.1 requires.
 */
export function parseHttpDate(value: string | null | undefined): Date | undefined {
  if (value == null) return undefined;
  const text = value.trim();
  let m: RegExpExecArray | null;
  if ((m = IMF_FIXDATE.exec(text))) return build(m[3], m[2], m[1], m[4], m[5], m[6]);
  if ((m = RFC850_DATE.exec(text))) {
    // §5.6.7: a two-digit year more than 50 years in the future belongs to the previous century.
    const now = new Date().getUTCFullYear();
    let year = now - (now % 100) + Number(m[3]);
    if (year > now + 50) year -= 100;
    return build(String(year), m[2], m[1], m[4], m[5], m[6]);
  }
  if ((m = ASCTIME_DATE.exec(text))) return build(m[6], m[1], m[2], m[3], m[4], m[5]);
  return undefined;
}

function build(...fields: (string | undefined)[]): Date | undefined {
  const [year, monthName, day, hour, minute, second] = fields;
  const [y, d, h, min, sec] = [year, day, hour, minute, second].map(Number);
  const month = MONTHS.indexOf(monthName ?? "");
  if (y === undefined || d === undefined || h === undefined || min === undefined || sec === undefined) return undefined;
  if (month < 0 || d < 1 || h > 23 || min > 59 || sec > 60) return undefined; // 60: leap second
  const date = new Date(0);
  date.setUTCFullYear(y, month, d); // not Date.UTC: it maps years 0–99 to 19xx
  if (date.getUTCDate() !== d) return undefined; // e.g. 31 Feb rolled over
  date.setUTCHours(h, min, sec);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT` (ECMAScript specifies `toUTCString` as exactly this). */
export const formatHttpDate = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000).toUTCString();

// ---- multipart/byteranges (RFC 9110 §14.6) ----

export interface Multipart {
  boundary: string;
  /** Exact byte length of the body. */
  length: number;
  stream(open: OpenBlob): ReadableStream<Uint8Array>;
}

function multipartByteranges(ranges: ByteRange[], size: number, contentType: string): Multipart {
  const random = crypto.getRandomValues(new Uint8Array(16));
  const boundary = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  const encoder = new TextEncoder();
  // Each delimiter after the first starts with the CRLF that ends the previous part (RFC 2046 §5.1.1).
  const parts = ranges.map((range, i) => ({
    range,
    head: encoder.encode(
      `${i > 0 ? "\r\n" : ""}--${boundary}\r\nContent-Type: ${contentType}\r\nContent-Range: ${contentRange(range, size)}\r\n\r\n`,
    ),
  }));
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const length = parts.reduce((sum, p) => sum + p.head.byteLength + p.range.end - p.range.start + 1, tail.byteLength);
  return { boundary, length, stream: (open) => partsStream(parts, tail, open) };
}

/**
 * Pull-based: nothing is opened or read until the consumer asks, one chunk per pull, and each part
 * is opened only once the previous one is drained — so backpressure holds and no part is buffered.
 */
function partsStream(
  parts: { range: ByteRange; head: Uint8Array }[],
  tail: Uint8Array,
  open: OpenBlob,
): ReadableStream<Uint8Array> {
  let next = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let remaining = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // Loop until one chunk is enqueued: a pull that enqueues nothing would stall the reader.
        for (;;) {
          if (reader) {
            const { done, value } = await reader.read();
            if (done) {
              reader = undefined;
              // Content-Length is already sent; a short part must fail the body, not corrupt it.
              if (remaining > 0) throw new Error(`blob stream ended ${remaining} bytes short of its range`);
              continue;
            }
            if (remaining === 0) {
              // More bytes than the range asked for: drop them to keep the framing exact.
              await reader.cancel();
              reader = undefined;
              continue;
            }
            const chunk = value.byteLength > remaining ? value.subarray(0, remaining) : value;
            remaining -= chunk.byteLength;
            if (chunk.byteLength > 0) {
              controller.enqueue(chunk);
              return;
            }
            continue;
          }
          const part = parts[next++];
          if (!part) {
            controller.enqueue(tail);
            controller.close();
            return;
          }
          reader = toStream(await open(part.range)).getReader();
          remaining = part.range.end - part.range.start + 1;
          controller.enqueue(part.head);
          return;
        }
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
