/**
 * Per-request context: a request id (a sane incoming `X-Request-Id` is honoured, otherwise a new
 * one), echoed in the response. The access log is the server's: it is written when the answer is
 * over (runtime/node/access-log.ts on node:http, the Worker's fetch handler on Workers).
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.js";
import type { Logger } from "../../lib/logger.js";
import type { Metrics } from "../../metrics/metrics.js";

// Only characters that are safe in headers and logs (no CR/LF injection, bounded length).
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export const requestIdFrom = (incoming: string | null | undefined): string =>
  incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();

export function requestContext(logger: Logger, metrics?: Pick<Metrics, "problem">): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = requestIdFrom(c.req.header("x-request-id"));
    c.set("requestId", requestId);
    c.set("logger", logger);
    if (metrics) c.set("metrics", metrics);
    await next();
    // On the response itself: `c.header()` after the handler would make Hono copy the response.
    c.res.headers.set("x-request-id", requestId);
  };
}
