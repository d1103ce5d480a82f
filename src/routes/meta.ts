/** Service metadata: `/apiversion`, liveness and readiness. */
import { createRoute, z } from "@hono/zod-openapi";
import type { Guards } from "../auth/guards.js";
import { problemResponses } from "../http/problem-handlers.js";
import type { Logger } from "../lib/logger.js";
import { ProblemError } from "../problems.js";
import { BEARER_SECURITY, createRouter, guarded } from "./router.js";

export { API_PREFIX, API_VERSION } from "../api-paths.js";

const VersionSchema = z
  .object({
    minVersion: z.number(),
    maxVersion: z.number(),
    versionContexts: z.record(z.string(), z.string()),
  })
  .openapi("Version", { example: { minVersion: 1.0, maxVersion: 1.0, versionContexts: { "1.0": "/cms/v1.0" } } });

const apiVersion = createRoute({
  method: "get",
  path: "/apiversion",
  operationId: "apiVersion",
  tags: ["meta"],
  summary: "API versions and the path prefix of each",
  security: BEARER_SECURITY,
  responses: {
    200: { description: "Supported versions", content: { "application/json": { schema: VersionSchema } } },
    ...problemResponses(401, 403),
  },
});

const HealthSchema = z.object({
  status: z.enum(["ok", "unavailable"]),
  checks: z.record(z.string(), z.string()).optional(),
});

const healthz = createRoute({
  method: "get",
  path: "/healthz",
  operationId: "healthz",
  tags: ["meta"],
  summary: "Liveness: the process answers",
  security: [],
  responses: { 200: { description: "Alive", content: { "application/json": { schema: HealthSchema } } } },
});

const readyz = createRoute({
  method: "get",
  path: "/readyz",
  operationId: "readyz",
  tags: ["meta"],
  summary: "Readiness: the database and the blob store are usable",
  security: [],
  responses: {
    200: { description: "Ready", content: { "application/json": { schema: HealthSchema } } },
    ...problemResponses(503),
  },
});

export interface ReadinessCheck {
  name: string;
  /** Cheap and read-only: it runs for the probes of every load balancer (the storage check is BlobStore.probe). */
  check(): Promise<void>;
}

/**
 * How long one readiness result answers every probe: 2 s. Load balancers probe each instance every
 * 5–30 s (AWS ALB at least 5 s, Kubernetes 10 s by default) and take it out after 2–3 failures, so a
 * result up to 2 s old delays noticing an outage by less than one probe interval, while any number of
 * balancers probing within 2 s cost one database ping and one storage read.
 */
export const READINESS_CACHE_MS = 2000;

/** The names of the failing checks, run at most once per `cacheMs` (probes in between share the run, in flight or done). */
function cachedReadiness(checks: ReadinessCheck[], cacheMs: number, now: () => number) {
  let last: { at: number; failed: Promise<string[]> } | null = null;
  const run = async (logger: Logger) => {
    const failed: string[] = [];
    await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await check();
        } catch (err) {
          failed.push(name);
          logger.warn("readiness check failed", { check: name, err });
        }
      }),
    );
    return failed.sort();
  };
  return (logger: Logger) => {
    const at = now();
    if (!last || at - last.at >= cacheMs || at < last.at) last = { at, failed: run(logger) };
    return last.failed;
  };
}

export function createMetaRouter(
  checks: ReadinessCheck[],
  guards: Guards,
  { cacheMs = READINESS_CACHE_MS, now = Date.now } = {},
) {
  const router = createRouter();
  const readiness = cachedReadiness(checks, cacheMs, now);
  // /apiversion is called with the bearer token when auth is on; any reader may call it.
  return router
    .openapi(
      guarded(apiVersion, guards.role("consumer")),
      (c) =>
        // sastix/cms clients compare this text exactly: `1.0`, not `1` (JSON.stringify would drop the `.0`).
        c.body('{"minVersion":1.0,"maxVersion":1.0,"versionContexts":{"1.0":"/cms/v1.0"}}', 200, {
          "content-type": "application/json",
        }) as never,
    )
    .openapi(healthz, (c) => c.json({ status: "ok" as const }, 200))
    .openapi(readyz, async (c) => {
      const failed = await readiness(c.get("logger"));
      if (failed.length) throw new ProblemError("UNAVAILABLE", `not ready: ${failed.join(", ")} unusable`);
      return c.json({ status: "ok" as const, checks: Object.fromEntries(checks.map((ch) => [ch.name, "ok"])) }, 200);
    });
}
