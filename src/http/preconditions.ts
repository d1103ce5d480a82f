/** Conditional requests (RFC 9110 §13): evaluating the precondition fields and If-Range against a representation. */
import { type ETag, listMatches, parseETag, strongMatch, weakMatch } from "./etag.js";
import { parseHttpDate } from "./http-date.js";

export type Outcome = { kind: "proceed" } | { kind: "not-modified" } | { kind: "failed"; detail: string };

/** §13.2.2 steps 1–4, in order. Only GET and HEAD reach here, so a matching If-None-Match is a 304. */
export function evaluatePreconditions(
  header: (name: string) => string | null | undefined,
  etag: ETag,
  lastModified: number | undefined,
): Outcome {
  const ifMatch = header("if-match") ?? null;
  if (ifMatch !== null) {
    if (!listMatches(ifMatch, etag, strongMatch))
      return { kind: "failed", detail: "If-Match does not match the current ETag" };
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
export function ifRangeAllows(value: string | null, etag: ETag, lastModified: number | undefined): boolean {
  if (value === null) return true;
  const trimmed = value.trim();
  if (trimmed.startsWith('"') || trimmed.startsWith("W/")) {
    const tag = parseETag(trimmed);
    return tag !== undefined && strongMatch(tag, etag);
  }
  const date = parseHttpDate(trimmed);
  return date !== undefined && lastModified !== undefined && date.getTime() === lastModified;
}
