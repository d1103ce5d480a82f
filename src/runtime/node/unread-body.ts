/**
 * Answers that go out before the request body was read (401 before an upload, a 413 from a size
 * limit, a 400 on an upload field before the file part): the rest of the body is still on the wire,
 * and the client may still be writing it.
 * - A small declared body is read to its end and dropped (bounded), and the connection is kept.
 * - Anything larger, or of unknown length, is answered with `Connection: close`; after the answer
 *   the server closes its sending side and keeps reading and dropping what arrives for a bounded
 *   time and number of bytes before it closes the connection (RFC 9112 §9.6). Closing a socket with
 *   unread input at once makes the kernel reset the connection, which drops the answer from the
 *   client's receive buffer: a client still writing its 100 MB upload saw EPIPE instead of the 401.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { Logger } from "../../lib/logger.js";

/** Declared bodies up to this size are read to the end after an early answer; larger ones close. */
export const DRAIN_MAX_BYTES = 1024 * 1024;
/**
 * How long the rest of a drained body may take to arrive before the connection is closed anyway;
 * the same 0.5 s after which @hono/node-server's own drain (autoCleanupIncoming) gives up.
 */
export const DRAIN_MAX_MS = 500;
/**
 * The lingering close after an early answer on a connection that closes: at most this long, and at
 * most LINGER_MAX_BYTES read and dropped, so a client cannot hold the connection open by sending —
 * long enough for the answer to reach a client on a slow link; clients that read it stop sending
 * (curl, fetch) and the connection closes at once. 64 MiB is @hono/node-server's own drain bound.
 */
export const LINGER_MAX_MS = 5000;
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;

type Outcome = "body ended" | "client closed" | "time limit" | "byte limit";

const hasBody = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";

/** Small enough to read to the end: a declared length within the bound (chunked bodies are unbounded). */
const drainable = (req: IncomingMessage) =>
  req.headers["transfer-encoding"] === undefined && Number(req.headers["content-length"]) <= DRAIN_MAX_BYTES;

/** How often the bounds are checked: a body node:http drops itself (no reader) never reaches `req`. */
const CHECK_EVERY_MS = 20;

/** Reads and drops the rest of `req`'s body within the bounds; `done` says how it stopped. */
function discard(req: IncomingMessage, maxBytes: number, maxMs: number, done: (outcome: Outcome) => void): void {
  if (req.complete || req.destroyed) {
    done(req.complete ? "body ended" : "client closed");
    return;
  }
  const { socket } = req;
  // Counted on the connection: node:http's parser drops the body of a request nobody reads
  // without pushing it to `req`.
  const startBytes = socket.bytesRead;
  const deadline = performance.now() + maxMs;
  let stopped = false;
  const stop = (outcome: Outcome) => {
    if (stopped) return;
    stopped = true;
    clearInterval(check);
    req.off("data", keepFlowing);
    socket.off("end", clientDone);
    socket.off("close", clientDone);
    done(outcome);
  };
  // The client's FIN or close: nothing more will come (after an answer node:http no longer tells `req`).
  const clientDone = () => stop(req.complete ? "body ended" : "client closed");
  const overBounds = () => {
    if (socket.bytesRead - startBytes > maxBytes) stop("byte limit");
    else if (performance.now() > deadline) stop("time limit");
  };
  // A Web stream the app opened over `req` pauses it whenever its queue is full; keep it flowing.
  const keepFlowing = () => {
    req.resume();
    overBounds();
  };
  const check = setInterval(overBounds, CHECK_EVERY_MS);
  check.unref();
  req.on("data", keepFlowing);
  req.once("end", () => stop("body ended"));
  req.once("close", clientDone);
  socket.once("end", clientDone);
  socket.once("close", clientDone);
  req.resume();
}

/**
 * Replaces the immediate close node:http makes after an answer with `Connection: close` (it calls
 * `socket.destroySoon()`, which resets a connection with unread input) by a lingering close.
 */
function lingerBeforeClosing(req: IncomingMessage, logger: Logger): void {
  const { socket } = req;
  let lingering = false;
  socket.destroySoon = () => {
    // @hono/node-server's own drain calls it again after 0.5 s: the linger already has the socket.
    if (lingering) return;
    lingering = true;
    const started = performance.now();
    socket.end(); // the answer is followed by FIN: the client reads it to its end
    discard(req, LINGER_MAX_BYTES, LINGER_MAX_MS, (outcome) => {
      logger.debug("request body left unread", {
        requestId: req.headers["x-request-id"] as string | undefined,
        // Everything read on this connection (it served this request only: it closes), head included.
        receivedBytes: socket.bytesRead,
        lingeredMs: Math.round(performance.now() - started),
        outcome,
      });
      socket.destroy();
    });
  };
}

/** Wraps `next` so every answer to a request with a body leaves the connection usable or closes it gracefully. */
export function settleUnreadBodies(logger: Logger, next: RequestListener): RequestListener {
  return (req, res) => {
    if (hasBody(req)) {
      const writeHead = res.writeHead;
      // Decided when the head goes out: only then is it known whether the body was read.
      res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
        if (!req.complete && !drainable(req)) this.shouldKeepAlive = false;
        const written = Reflect.apply(writeHead, this, args) as ServerResponse;
        // node:http also closes after an `Expect: 100-continue` request answered without 100.
        if (!req.complete && !this.shouldKeepAlive) lingerBeforeClosing(req, logger);
        return written;
      } as ServerResponse["writeHead"];
      res.once("finish", () => {
        if (req.complete || !res.shouldKeepAlive) return;
        discard(req, DRAIN_MAX_BYTES, DRAIN_MAX_MS, (outcome) => {
          // A client too slow or a body too long loses the connection.
          if (outcome === "time limit" || outcome === "byte limit") req.socket.destroy();
        });
      });
    }
    next(req, res);
  };
}
