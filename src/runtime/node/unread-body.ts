/**
 * Keeps HTTP/1.1 keep-alive honest when an answer goes out before the request body was read (a
 * 413 from the body limit, a 400 on an upload field before the file part). The rest of the body is
 * still on the wire in front of the client's next request, so it is either read and discarded
 * (bounded) or the answer says `Connection: close` — never keep-alive over a stuck connection.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";

/** Declared bodies up to this size are read to the end after an early answer; larger ones close. */
export const DRAIN_MAX_BYTES = 1024 * 1024;
/**
 * How long the rest of a drained body may take to arrive before the connection is closed anyway;
 * the same 0.5 s after which @hono/node-server's own drain (autoCleanupIncoming) gives up.
 */
export const DRAIN_MAX_MS = 500;

const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";

/** Small enough to read to the end: a declared length within the bound (chunked bodies are unbounded). */
const drainable = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] === undefined && Number(req.headers["content-length"]) <= DRAIN_MAX_BYTES;

/** Reads and drops the rest of `req`'s body; a client too slow or a body too long loses the connection. */
function discardRest(req: IncomingMessage): void {
  if (req.destroyed) return;
  let bytes = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off("data", onData);
  };
  const giveUp = () => {
    stop();
    req.socket.destroy();
  };
  const onData = (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > DRAIN_MAX_BYTES) return giveUp();
    // A Web stream the app opened over `req` pauses it whenever its queue is full; keep it flowing.
    req.resume();
  };
  const timer = setTimeout(giveUp, DRAIN_MAX_MS);
  timer.unref();
  req.on("data", onData);
  req.once("end", stop);
  req.once("close", stop);
  req.resume();
}

/** Wraps `next` so every answer to a request with a body leaves the connection usable or says it closes. */
export function settleUnreadBodies(next: RequestListener): RequestListener {
  return (req, res) => {
    if (hasBody(req)) {
      const writeHead = res.writeHead;
      // Decided when the head goes out: only then is it known whether the body was read.
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
        if (!req.complete && !drainable(req)) this.shouldKeepAlive = false;
        return Reflect.apply(writeHead, this, args);
      } as ServerResponse["writeHead"];
      res.once("finish", () => {
        if (!req.complete) discardRest(req);
      });
    }
    next(req, res);
  };
}
