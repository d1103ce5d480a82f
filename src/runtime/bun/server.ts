/**
 * The Bun entry's server: Bun.serve, with getData's anonymous reads answered before Hono
 * (fast-get.ts) and everything else handed to `app.fetch`. Checked on Bun 1.4.5 and pinned by
 * test/runtime/bun-fast-get.test.ts: Bun.serve still sends a streamed body of
 * more than one chunk chunked and drops its Content-Length (oven-sh/bun#10507), so blob files go
 * out as sized `Bun.file` slices — from the fast path, and via `sized` for the app's answers that
 * stream a blob file. Still chunked here (node:http kept their Content-Length): multipart byte
 * ranges, whose parts are file slices (a Blob made of `Bun.file` slices loses their bytes on Bun
 * 1.4.5). Explorer assets are bytes, and a package's files are blobs of their own, so both go out
 * sized. HEAD answers carry no body, so their Content-Length stays.
 *
 * What node:http did around the app on Node, and how it is here:
 * - access log: one line per request, written when the answer is handed to Bun (Bun.serve does
 *   not tell when it is sent, so there is no sentBytes and no `aborted` as on Node);
 * - malformed requests and oversized heads are refused by Bun itself (bodiless 400/431/505, not
 *   problem+json): the one thing node:http did better that Bun.serve cannot be told to do;
 * - bodies left unread by an early refusal are skipped by Bun (the connection stays usable);
 * - `Expect: 100-continue` is answered by Bun itself, at once: unlike node:http (expect-continue.ts)
 *   it cannot wait for the guards, so a waiting client sends part of a refused body (still refused
 *   readably: test/runtime/refusal-any-size.test.ts);
 * - idle connections close after IDLE_TIMEOUT_S; the blob collector's timer is the deps' own;
 * - SIGINT/SIGTERM stop accepting, let answers in flight finish (5 s at most), close the database.
 */
import type { Bootstrapped } from "../host/bootstrap.js";
import { fail, logListening, stopOnSignals, warmImages } from "../host/bootstrap.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";
import { parseTraceparent } from "../../metrics/trace-context.js";
import { METRICS_PATH } from "../host/metrics-endpoint.js";
import { inTrace } from "../host/trace-scope.js";
import { requestMetrics } from "../host/request-metrics.js";
import { readsAreOpen } from "../../auth/guards.js";
import { sentContentOf } from "../../delivery/web.js";
import { ProblemError, problemResponse } from "../../problems.js";
import type { ContentService } from "../../services/content.js";
import { bunApi } from "./bun-api.js";
import { bunFastGet } from "./fast-get.js";

/** Long enough for a slow client between chunks of an upload or a download; 255 is Bun's maximum. */
const IDLE_TIMEOUT_S = 120;

/**
 * An app answer streaming content (delivery/web.ts) re-made with the same bytes of the
 * blob's local file as a sized body, when the blob store has local files (the fs driver): Bun.serve
 * sends a streamed body chunked and drops its Content-Length. Other streamed answers (multipart
 * ranges, uploads' answers, blobs on S3) go out as they are, chunked.
 */
async function sized(res: Response, content: Pick<ContentService, "localFile">): Promise<Response> {
  const sent = res.body ? sentContentOf(res.body) : undefined;
  if (!res.body || !sent || sent.body.end < sent.body.start) return res;
  const file = await content.localFile(sent.row).catch(() => null);
  if (!file) return res;
  res.body.cancel().catch(() => {});
  const body = bunApi()
    .file(file.path)
    .slice(file.offset + sent.body.start, file.offset + sent.body.end + 1);
  return new Response(body, { status: res.status, headers: res.headers });
}

/** The request target's path and query. */
const pathOf = (req: Request) => req.url.slice(req.url.indexOf("/", req.url.indexOf("//") + 2));
const isMetricsPath = (req: Request) => {
  const path = pathOf(req);
  return path === METRICS_PATH || path.startsWith(`${METRICS_PATH}?`);
};
const lengthOf = (headers: Headers) => Number(headers.get("content-length")) || 0;

const internalError = () => problemResponse(new ProblemError("INTERNAL", "The server failed to handle this request."));

export function serveBun(started: Bootstrapped): void {
  const { config, deps, services, logger, app } = started;
  const fast = bunFastGet({
    services,
    anonymousRead: readsAreOpen({ verifier: deps.verifier, publicRead: config.CMS_PUBLIC_READ }),
    signedLinks: { links: deps.links, clock: deps.clock },
    cachedUpTo: config.CMS_BLOB_CACHE_BYTES > 0 ? config.CMS_BLOB_CACHE_ENTRY_BYTES : -1,
  });

  const observe = requestMetrics(deps.metrics, app);
  const { metricsEndpoint } = deps;

  const failed = (err: unknown) => {
    logger.error("unhandled error", { err });
    return internalError();
  };

  /** The fast path's answer once it settles, else the app's (`fastPath` in the access log says which). */
  async function answerLater(
    req: Request,
    fastAnswer: Promise<Response | null> | null,
    start: number,
    requestId: string,
  ): Promise<Response> {
    let res: Response;
    try {
      const fastRes = await fastAnswer;
      if (fastRes) return logged(req, fastRes, start, requestId);
      // A valid W3C traceparent goes on, as a child, to the origin fetches this request makes.
      const trace = parseTraceparent(req.headers.get("traceparent"));
      res = await sized(await inTrace(trace, () => app.fetch(req)), services.content);
    } catch (err) {
      res = failed(err);
    }
    return logged(req, res, start);
  }

  /**
   * Writes the access-log line of `res` and returns it. `fastId`: the request id a fast-path answer
   * was given (the line says `fastPath`, and no header is looked up on the Response); the app's
   * answers echo theirs in `x-request-id`.
   */
  function logged(req: Request, res: Response, start: number, fastId?: string): Response {
    const path = pathOf(req);
    const query = path.indexOf("?");
    const bare = query < 0 ? path : path.slice(0, query);
    const durationMs = performance.now() - start;
    const traceparent = req.headers.get("traceparent");
    logger.info("request", {
      // The app settles the id the same way and echoes it; this is the one the client sees.
      requestId: fastId ?? res.headers.get("x-request-id") ?? undefined,
      method: req.method,
      path: bare,
      status: res.status,
      durationMs: Math.round(durationMs * 100) / 100,
      fastPath: fastId === undefined ? undefined : true,
      traceparent: traceparent === null ? undefined : parseTraceparent(traceparent)?.traceparent,
    });
    // Bun.serve tells no byte counts: the declared body lengths stand in for them.
    observe?.(req.method, bare, res.status, durationMs / 1000, lengthOf(res.headers), lengthOf(req.headers));
    return res;
  }

  let server: ReturnType<ReturnType<typeof bunApi>["serve"]>;
  try {
    server = bunApi().serve({
      hostname: config.CMS_HOST,
      port: config.CMS_PORT,
      idleTimeout: IDLE_TIMEOUT_S,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Not async: a fast answer given in this call goes back to Bun without a promise.
      fetch(req) {
        const start = performance.now();
        if (metricsEndpoint && isMetricsPath(req)) {
          return metricsEndpoint(req.method, req.headers.get("authorization")).then(
            (res) => logged(req, res, start),
            (err: unknown) => logged(req, failed(err), start),
          );
        }
        try {
          const requestId = requestIdFrom(req.headers.get("x-request-id"));
          const fastAnswer = fast(req, requestId);
          return fastAnswer instanceof Response
            ? logged(req, fastAnswer, start, requestId)
            : answerLater(req, fastAnswer, start, requestId);
        } catch (err) {
          return logged(req, failed(err), start);
        }
      },
      // A blob file the fast path knew, gone since: BLOB_MISSING, not the bare INTERNAL of any other failure.
      error: (err) => {
        const missing = fast.sliceFailure(err);
        return missing ? problemResponse(missing) : failed(err);
      },
    });
  } catch (err) {
    fail(
      new Error(`${config.CMS_HOST}:${config.CMS_PORT}: ${(err as { code?: string }).code ?? (err as Error).message}`),
    );
  }
  const host = config.CMS_HOST.includes(":") ? `[${config.CMS_HOST}]` : config.CMS_HOST;
  logListening(started, `http://${host}:${server.port}`, "bun");
  warmImages(started);
  stopOnSignals(started, () => server.stop());
}
