/**
 * The access log of the node:http server (Node and Bun): one line per request, written when the
 * answer is over — completely sent, or cut short because the client went away — for every way the
 * request was answered (fast path, app, early refusals). A line written when the headers leave
 * would call an aborted download complete. The request metrics are taken at the same moment, and a
 * valid W3C `traceparent` is logged and carried through the request's work (runtime/host/trace-scope.ts).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "../../lib/logger.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";
import { parseTraceparent, type TraceContext } from "../../metrics/trace-context.js";
import type { RequestObserver } from "../host/request-metrics.js";
import { inTrace } from "../host/trace-scope.js";

/** The connection's bytes read that earlier requests on it already counted. */
const COUNTED_READ = Symbol("countedRead");
type CountedSocket = Socket & { [COUNTED_READ]?: number };

/** Bytes read from the connection since the last request on it counted them: heads and bodies. */
function readSinceLast(socket: CountedSocket): number {
  const read = socket.bytesRead;
  const before = socket[COUNTED_READ] ?? 0;
  socket[COUNTED_READ] = read;
  return read - before;
}

function logWhenDone(
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  started: number,
  trace: TraceContext | null,
  observe: RequestObserver | undefined,
): void {
  // The id is settled here, where the line is written; the fast path and the app take it from the
  // header (a sane id is kept as it is), so the answer echoes the id the log shows.
  const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
  req.headers["x-request-id"] = requestId;
  const { socket } = req;
  // On a kept-alive connection answers are sequential, so the delta is this answer's bytes.
  const sentBefore = socket.bytesWritten;
  res.once("close", () => {
    const path = req.url ?? "";
    const query = path.indexOf("?");
    const bare = query < 0 ? path : path.slice(0, query);
    const durationMs = performance.now() - started;
    const sentBytes = socket.bytesWritten - sentBefore;
    logger.info("request", {
      requestId,
      method: req.method,
      path: bare,
      status: res.statusCode,
      durationMs: Math.round(durationMs * 100) / 100,
      // Bytes written to the connection, headers included.
      sentBytes,
      // The connection closed before the whole answer was handed to the OS.
      aborted: res.writableFinished ? undefined : true,
      traceparent: trace?.traceparent,
    });
    observe?.(req.method ?? "", bare, res.statusCode, durationMs / 1000, sentBytes, readSinceLast(socket));
  });
}

export function withAccessLog(logger: Logger, next: RequestListener, observe?: RequestObserver): RequestListener {
  return (req, res) => {
    const header = req.headers.traceparent;
    const trace = header === undefined ? null : parseTraceparent(typeof header === "string" ? header : undefined);
    logWhenDone(logger, req, res, performance.now(), trace, observe);
    // Without a trace nothing is entered: no closure per request.
    if (trace) inTrace(trace, () => next(req, res));
    else next(req, res);
  };
}
