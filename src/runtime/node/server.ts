/**
 * The node:http server of the Node and Bun entry points: @hono/node-server's adapter for the app,
 * with the cached-getData fast path in front of it. Not listening yet; the caller picks the address.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import { getRequestListener, RequestError } from "@hono/node-server";
import { readsAreOpen } from "../../auth/guards.js";
import type { App, AppDeps } from "../../app.js";
import type { Config } from "../../config.js";
import { ProblemError, problemResponse } from "../../problems.js";
import type { Logger } from "../../lib/logger.js";
import type { Services } from "../../services/index.js";
import { METRICS_PATH, type MetricsEndpoint } from "../host/metrics-endpoint.js";
import { requestMetrics } from "../host/request-metrics.js";
import { withAccessLog } from "./access-log.js";
import { answerClientErrors } from "./client-errors.js";
import { continueOnFirstRead } from "./expect-continue.js";
import { withFastGet } from "./fast-get.js";
import { settleUnreadBodies } from "./unread-body.js";

export interface NodeServerParts {
  config: Pick<Config, "CMS_HOST" | "CMS_PUBLIC_READ">;
  deps: Pick<AppDeps, "verifier" | "metrics" | "links" | "clock"> & { metricsEndpoint?: MetricsEndpoint | null };
  services: Services;
  logger: Logger;
  app: App;
}

/**
 * The adapter's answer when it cannot build a Request (a raw backslash in the path, an invalid Host
 * header: its messages say which) or, never expected, when the app itself throws.
 */
const adapterError = (logger: Logger) => (err: unknown) => {
  if (err instanceof RequestError) {
    return problemResponse(
      new ProblemError("VALIDATION_FAILED", `the request target or Host header is not valid: ${err.message}`),
    );
  }
  logger.error("unhandled error", { err });
  return problemResponse(new ProblemError("INTERNAL", "The server failed to handle this request."));
};

/**
 * How long an idle keep-alive connection stays open. Longer than the upstream idle timeout of the
 * proxies in front of us (nginx and cloud load balancers: 60 s) and of clients that ignore the
 * Keep-Alive hint: whoever closes an idle connection must be the one that would reuse it, or a request
 * sent as the server's close crosses the wire is lost ("socket hang up", a proxy's 502). Node's own
 * default is 5 s; Bun's entry keeps connections 120 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** GET /metrics, answered before the fast path and the app (it is no route of theirs). */
function withMetricsEndpoint(endpoint: MetricsEndpoint, logger: Logger, next: RequestListener): RequestListener {
  return (req, res) => {
    const { url = "" } = req;
    if (url !== METRICS_PATH && !url.startsWith(`${METRICS_PATH}?`)) return next(req, res);
    endpoint(req.method ?? "", req.headers.authorization)
      .then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        res.end(Buffer.from(await answer.arrayBuffer()));
      })
      .catch((err: unknown) => {
        logger.error("unhandled error", { err, path: METRICS_PATH });
        res.destroy();
      });
  };
}

export function createNodeServer({ config, deps, services, logger, app }: NodeServerParts): Server {
  const anonymousRead = readsAreOpen({ verifier: deps.verifier, publicRead: config.CMS_PUBLIC_READ });
  const appListener = getRequestListener(app.fetch, {
    hostname: config.CMS_HOST,
    // Kept on (the default): it hands the app a body whose cancel leaves the request readable, so
    // settleUnreadBodies can drain it (its own drain then closes a kept-alive connection still unread after
    // 0.5 s; a closing one lingers first: unread-body.ts).
    autoCleanupIncoming: true,
    errorHandler: adapterError(logger),
  });
  const signedLinks = { links: deps.links, clock: deps.clock };
  const fastGet = withFastGet({ services, logger, anonymousRead, signedLinks }, appListener);
  const listener = settleUnreadBodies(
    logger,
    withAccessLog(
      logger,
      deps.metricsEndpoint ? withMetricsEndpoint(deps.metricsEndpoint, logger, fastGet) : fastGet,
      requestMetrics(deps.metrics, app),
    ),
  );
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, listener);
  // `Expect: 100-continue`: 100 goes out once the app reads the body, never before a refusal.
  server.on("checkContinue", continueOnFirstRead(listener));
  // Requests node:http refuses itself (malformed, head too large) get problem+json too.
  server.on("clientError", answerClientErrors(logger));
  return server;
}
