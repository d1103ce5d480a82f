/**
 * Per-request context: a request id (a sane incoming `X-Request-Id` is honoured, otherwise a new
 * one), echoed in the response, and one structured access-log line per request.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.js";
import type { Logger } from "../lib/logger.js";

// Only characters that are safe in headers and logs (no CR/LF injection, bounded length).
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export const requestIdFrom = (incoming: string | null | undefined): string =>
  incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();

export interface AccessRecord {
  requestId: string;
  method: string;
  path: string;
  status: number;
  /** `now()` when the request arrived. */
  started: number;
  /** Content-Length of the response, if any. */
  length: string | null | undefined;
}

/** The access-log line, the same from every way a request is answered. */
export function logAccess(logger: Logger, record: AccessRecord, now: () => number = () => performance.now()) {
  const { requestId, method, path, status, started, length } = record;
  logger.info("request", {
    requestId,
    method,
    path,
    status,
    durationMs: Math.round((now() - started) * 100) / 100,
    length: Number(length ?? 0) || undefined,
  });
}

export function requestContext(logger: Logger, now: () => number = () => performance.now()): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = now();
    const requestId = requestIdFrom(c.req.header("x-request-id"));
    c.set("requestId", requestId);
    c.set("logger", logger);
    await next();
    // On the response itself: `c.header()` after the handler would make Hono copy the response.
    c.res.headers.set("x-request-id", requestId);
    logAccess(
      logger,
      {
        requestId,
        method: c.req.method,
        path: c.req.path, // already parsed by the router; a new URL per request shows in profiles
        status: c.res.status,
        started,
        length: c.res.headers.get("content-length"),
      },
      now,
    );
  };
}
