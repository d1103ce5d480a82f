/**
 * The access log of the node:http server (Node and Bun): one line per request, written when the
 * answer is over — completely sent, or cut short because the client went away — for every way the
 * request was answered (fast path, app, early refusals). A line written when the headers leave
 * would call an aborted download complete.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Logger } from "../../lib/logger.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";

function logWhenDone(logger: Logger, req: IncomingMessage, res: ServerResponse, started: number): void {
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
    logger.info("request", {
      requestId,
      method: req.method,
      path: query < 0 ? path : path.slice(0, query),
      status: res.statusCode,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      // Bytes written to the connection, headers included.
      sentBytes: socket.bytesWritten - sentBefore,
      // The connection closed before the whole answer was handed to the OS.
      aborted: res.writableFinished ? undefined : true,
    });
  });
}

export function withAccessLog(logger: Logger, next: RequestListener): RequestListener {
  return (req, res) => {
    logWhenDone(logger, req, res, performance.now());
    next(req, res);
  };
}
