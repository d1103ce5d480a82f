/**
 * Per-request context: a request id (a sane incoming `X-Request-Id` is honoured, otherwise a new
 * one), echoed in the response, and one structured access-log line per request.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env.js";
import type { Logger } from "../lib/logger.js";

// Only characters that are safe in headers and logs (no CR/LF injection, bounded length).
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export function requestContext(logger: Logger, now: () => number = () => performance.now()): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = now();
    const incoming = c.req.header("x-request-id");
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set("requestId", requestId);
    c.set("logger", logger);
    await next();
    // On the response itself: `c.header()` after the handler would make Hono copy the response.
    c.res.headers.set("x-request-id", requestId);
    logger.info("request", {
      requestId,
      method: c.req.method,
      path: c.req.path, // already parsed by the router; a new URL per request shows in profiles
      status: c.res.status,
      durationMs: Math.round((now() - started) * 100) / 100,
      length: Number(c.res.headers.get("content-length") ?? 0) || undefined,
    });
  };
}
