/**
 * GET /metrics on Node and Bun (CMS_METRICS_ENABLED=true): the Prometheus text exposition, behind
 * `Authorization: Bearer $CMS_METRICS_TOKEN` when a token is set. Not a route of the app: it exists
 * only where prom-client runs, and the servers answer it before the app (as they do the fast path).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { ProblemError, problemResponse } from "../../problems.js";
import type { PromMetrics } from "./prom-metrics.js";

/** The exposition: this process's (prom-metrics.ts) or, under CMS_WORKERS > 1, every worker's (cluster-metrics.ts). */
export type Scrape = PromMetrics["scrape"];

export const METRICS_PATH = "/metrics";

export type MetricsEndpoint = (method: string, authorization: string | null | undefined) => Promise<Response>;

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Whether `authorization` carries the token: equal-length digests compared in constant time. */
function authorized(authorization: string | null | undefined, expected: Buffer): boolean {
  return timingSafeEqual(digest(authorization ?? ""), expected);
}

export function createMetricsEndpoint(scrape: Scrape, token: string | undefined): MetricsEndpoint {
  const expected = token === undefined ? null : digest(`Bearer ${token}`);
  return async (method, authorization) => {
    if (method !== "GET" && method !== "HEAD") {
      return problemResponse(
        new ProblemError("METHOD_NOT_ALLOWED", `${method} is not allowed here; use GET, HEAD`, {
          headers: { allow: "GET, HEAD" },
        }),
        METRICS_PATH,
      );
    }
    if (expected && !authorized(authorization, expected)) {
      return problemResponse(
        new ProblemError("UNAUTHENTICATED", "GET /metrics needs the bearer token CMS_METRICS_TOKEN", {
          errors: [{ pointer: "/headers/authorization", detail: "missing or not the metrics token" }],
          headers: { "www-authenticate": 'Bearer realm="metrics"' },
        }),
        METRICS_PATH,
      );
    }
    const scraped = await scrape().catch((err: unknown) => err as Error);
    if (scraped instanceof Error) {
      // The workers' metrics could not all be gathered (one busy past the wait): never a partial sum.
      return problemResponse(
        new ProblemError("UNAVAILABLE", scraped.message, { headers: { "retry-after": "1" } }),
        METRICS_PATH,
      );
    }
    const { contentType, text } = scraped;
    return new Response(method === "HEAD" ? null : text, {
      headers: { "content-type": contentType, "cache-control": "no-store" },
    });
  };
}
