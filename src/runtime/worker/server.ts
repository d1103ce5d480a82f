/**
 * The Worker's server: the app built once per isolate from its bindings (deps.ts), each request
 * through the colo's cache (edge-cache.ts) with this colo's copies evicted after a change, the
 * access-log line and the Analytics Engine data point, and the cron's collection and webhook pass.
 */
import { createApp, type App, type AppDeps } from "../../app.js";
import { takeStale } from "../../delivery/stale-paths.js";
import { type Config, ConfigError, parseConfig } from "../../config.js";
import { createJsonLogger, type Logger } from "../../lib/logger.js";
import { createRouteTemplates, methodLabel } from "../../metrics/route-templates.js";
import { ProblemError, problemResponse } from "../../problems.js";
import { StoreOwnedElsewhere } from "../../services/store-owner.js";
import { type D1Sessions, d1Sessions } from "./d1-sessions.js";
import { analyticsEngineMetrics } from "./analytics-metrics.js";
import { createWorkerDeps, settingsOf, type WorkerBindings } from "./deps.js";
import { evictPaths, throughEdgeCache } from "./edge-cache.js";

/** Hosts the app with its bindings; `fetch` answers every request of the isolate. */
export interface WorkerApp {
  fetch(request: Request, env: object, ctx?: unknown): Response | Promise<Response>;
  /** The cron trigger's work (wrangler.toml): a blob collection pass, with a storage sweep when `sweep`. */
  collect(env: object, options: { sweep: boolean }): Promise<void>;
}

let isolateId: string | undefined;
/** CMS_INSTANCE_ID, or an id of this isolate (made on first use: no randomness at a Worker's global scope). */
const instanceOf = (config?: Pick<Config, "CMS_INSTANCE_ID">) =>
  config?.CMS_INSTANCE_ID ?? (isolateId ??= `isolate-${crypto.randomUUID().slice(0, 8)}`);

/** Per-isolate logger: one JSON object per line on the Workers console (Workers Logs / `wrangler tail`). */
const consoleLogger = (config?: Pick<Config, "CMS_LOG_LEVEL" | "CMS_INSTANCE_ID">) =>
  createJsonLogger((line) => console.log(line), config?.CMS_LOG_LEVEL ?? "info", undefined, {
    instance: instanceOf(config),
  });

type Built =
  | {
      app: App;
      deps: AppDeps;
      logger: Logger;
      routeOf: (method: string, path: string) => string;
      instance: string;
      sessions: D1Sessions | undefined;
    }
  | { misconfigured: ProblemError };

/** One webhook delivery pass of the app's deliverer (services/webhook-deliverer.ts). */
const deliverWebhooks = (deps: AppDeps) => deps.webhookDeliverer.pass();

/**
 * The app for one `env`, built on first use and cached for the isolate's lifetime (Workers pass
 * the same env object to every request). Bad settings answer every request with a 500 problem,
 * logged once with the setting names only (values may be secrets); a BLOBS bucket owned by another
 * deployment answers every request (and the cron) with 503 STORE_OWNED_ELSEWHERE, logged once.
 * Other start-up failures are not cached, so the next request retries. `clock` is for tests.
 */
export function createWorkerApp({ clock }: { clock?: AppDeps["clock"] } = {}): WorkerApp {
  const built = new WeakMap<object, Promise<Built>>();

  const build = async (env: WorkerBindings): Promise<Built> => {
    try {
      const config = parseConfig(settingsOf(env));
      const logger = consoleLogger(config);
      const built = await createWorkerDeps(env, config, logger, clock);
      // What stands in for /metrics here (README, Metrics): a data point per request, by route template.
      const deps = env.METRICS ? { ...built, metrics: analyticsEngineMetrics(env.METRICS, instanceOf(config)) } : built;
      const app = createApp(deps);
      // D1 sessions only when D1 holds the metadata (not a remote libSQL database).
      const sessions = settingsOf(env).CMS_DATABASE_URL ? undefined : d1Sessions(env.DB);
      return {
        app,
        deps,
        logger,
        routeOf: createRouteTemplates(app.routes),
        instance: instanceOf(config),
        sessions,
      };
    } catch (err) {
      if (err instanceof StoreOwnedElsewhere) {
        // A Worker cannot exit: it refuses to serve instead (the Node and Bun entries stop with exit code 1).
        consoleLogger().error("cannot start", { error: err.message });
        return {
          misconfigured: new ProblemError(
            "STORE_OWNED_ELSEWHERE",
            "this deployment's blob store belongs to another deployment; see the log",
          ),
        };
      }
      if (!(err instanceof ConfigError)) throw err;
      const settings = err.issues.map((issue) => issue.split(" ", 1)[0]);
      consoleLogger().error("invalid configuration", { settings });
      return { misconfigured: new ProblemError("INTERNAL", "the service is misconfigured; see the log") };
    }
  };

  const builtFor = (env: object): Promise<Built> => {
    let pending = built.get(env);
    if (!pending) {
      pending = build(env as WorkerBindings);
      built.set(env, pending);
      pending.catch(() => built.delete(env));
    }
    return pending;
  };

  return {
    async collect(env, { sweep }) {
      const result = await builtFor(env);
      if ("misconfigured" in result) return;
      const { deps } = result;
      const { collector } = deps;
      if (sweep) await collector.sweep(); // logs blobs D1 has no record of; never deletes them
      deps.logger.info("blobs collected", { ...(await collector.pass()) });
      // The cron also delivers webhooks a write's waitUntil left behind (retries, a recycled isolate).
      deps.logger.info("webhooks delivered", { ...(await deliverWebhooks(deps)) });
    },

    async fetch(request, env, ctx) {
      const pending = builtFor(env);
      let result: Built;
      try {
        result = await pending;
      } catch (err) {
        consoleLogger().error("start-up failed", { error: err });
        return problemResponse(
          new ProblemError("INTERNAL", "the service could not start; see the log"),
          new URL(request.url).pathname,
        );
      }
      if ("misconfigured" in result) return problemResponse(result.misconfigured, new URL(request.url).pathname);
      const started = performance.now();
      const waitUntil = (work: Promise<unknown>) =>
        (ctx as { waitUntil?: (p: Promise<unknown>) => void } | undefined)?.waitUntil?.(work.catch(() => {}));
      const serve = async () => {
        const answered = await throughEdgeCache(
          request,
          async () => result.app.fetch(request, env, ctx as never),
          waitUntil,
        );
        // What an update, delete or purge made stale, as its route named it (delivery/stale-paths.ts).
        const stale = takeStale(ctx);
        if (stale) await evictPaths(new URL(request.url).origin, stale);
        return answered;
      };
      let response: Response;
      try {
        response = result.sessions ? await result.sessions.run(request, serve) : await serve();
      } catch (err) {
        if (!(err instanceof ProblemError)) throw err;
        response = problemResponse(err, new URL(request.url).pathname);
      }
      // A write may have put events in the outbox: deliver after the answer, never delaying it.
      if (request.method !== "GET" && request.method !== "HEAD" && request.method !== "OPTIONS")
        waitUntil(
          deliverWebhooks(result.deps).catch((err: unknown) =>
            result.logger.warn("webhook delivery pass failed", { error: err }),
          ),
        );
      // Written when the answer starts: a Worker cannot see how much of a streamed body was taken.
      const path = new URL(request.url).pathname;
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const length = Number(response.headers.get("content-length") ?? 0) || undefined;
      result.logger.info("request", {
        requestId: response.headers.get("x-request-id"),
        method: request.method,
        path,
        status: response.status,
        durationMs,
        length,
      });
      // Through the Metrics interface, as Node and Bun count requests (runtime/host/request-metrics.ts).
      const { metrics } = result.deps;
      if (metrics.enabled) {
        const method = methodLabel(request.method);
        metrics.request(method, result.routeOf(method, path), response.status, durationMs / 1000, length ?? 0, 0);
      }
      return response;
    },
  };
}
