/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the incoming `traceparent` is taken when
 * valid (a malformed one is ignored, as the spec asks) and passed on to origin fetches as a child:
 * same trace id, a new parent id (this service's span). Web APIs only.
 */

export interface TraceContext {
  /** The header as received (lowercase hex), for the access log. */
  traceparent: string;
  traceId: string;
  flags: string;
}

// version-traceid-parentid-flags; a future version may append fields after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_PARENT = "0".repeat(16);

/** The trace context of a `traceparent` header, or null when it is absent or not valid. */
export function parseTraceparent(header: string | null | undefined): TraceContext | null {
  if (!header || header.length > 512) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return null;
  const [, version, traceId, parentId, flags, rest] = m as unknown as [string, string, string, string, string, string?];
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || parentId === ZERO_PARENT) return null;
  return { traceparent: `${version}-${traceId}-${parentId}-${flags}`, traceId, flags };
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** A new span id: 8 random bytes, never all zero. */
function spanId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  if (bytes.every((b) => b === 0)) bytes[7] = 1;
  return hex(bytes);
}

/** The `traceparent` of a call made within `context`: version 00, same trace and flags, a new parent id. */
export const childTraceparent = (context: TraceContext) => `00-${context.traceId}-${spanId()}-${context.flags}`;
