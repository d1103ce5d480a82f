/**
 * SSRF-safe `FetchOrigin` for Node (and Bun's node:http): resolves each host once, refuses
 * non-global addresses, pins the connection to the checked address and streams the body with backpressure.
 * Connections are kept alive for the next fetch to the same checked address (node-connection-pool.ts).
 */
import dns, { type LookupAddress, type LookupAllOptions } from "node:dns";
import http, { type ClientRequest, type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction, Socket } from "node:net";
import { ipVersion, unbracket } from "./ip-address.js";
import type { FetchOrigin, OriginResponse, OriginSend } from "./fetch-origin.js";
import { createConnectionPool } from "./node-connection-pool.js";
import { createOriginGuard, type OriginGuard, type UrlSubject } from "./guard.js";
import { followRedirects, parseContentLength, parseReprSha256 } from "./policy.js";

/** `dns.lookup` with `{ all: true }`. */
export type LookupAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface NodeFetchOriginOptions {
  /**
   * What problems call the URL, and its field.
   * @default EXTERNAL_URI (guard.ts)
   */
  subject?: UrlSubject;
  /**
   * Skip the address-range check (loopback/private allowed). Development and tests only.
   * @default false
   */
  allowPrivate?: boolean;
  /**
   * Budget for the whole fetch: DNS, connect, redirects, headers and the entire body.
   * @default 60_000
   */
  totalTimeoutMs?: number;
  /**
   * Budget per hop for DNS resolution, and again for TCP connect plus TLS handshake.
   * @default 10_000
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait for the origin while we are waiting on it: for response headers after connecting,
   * and for the next body chunk while the consumer is reading. Time the consumer spends not reading does not count.
   * @default 30_000
   */
  idleTimeoutMs?: number;
  /**
   * Redirects followed before failing with ORIGIN_FAILED; each hop is re-validated.
   * @default 5
   */
  maxRedirects?: number;
  /**
   * How long a connection stays open unused, for the next fetch to the same checked address, port
   * and name; 0 closes each connection after its fetch.
   * @default 2_000
   */
  idleConnectionMs?: number;
  /**
   * Value of the User-Agent request header.
   * @default "content-resource-service"
   */
  userAgent?: string;
  /**
   * The W3C `traceparent` to send (a child of the request's trace: runtime/host/trace-scope.ts), asked
   * per request; none when it gives undefined.
   */
  traceparent?: () => string | undefined;
  /**
   * Tests only: DNS resolver, called once per hop for non-literal hosts.
   * @default dns.lookup
   */
  lookup?: LookupAll;
  /**
   * Tests only: address policy applied to IP literals, every resolved address and the connected peer.
   * @default allowPrivate ? () => true : isGlobalUnicast
   */
  isAllowedAddress?: (address: string) => boolean;
}

/** Idle connections kept per (address, port, name, scheme), and how many such keys. */
const IDLE_CONNECTIONS_PER_KEY = 4;
const POOL_KEYS = 32;

/** `headers`, with the trace context's header when there is one. */
const withTraceparent = (headers: Record<string, string>, traceparent: string | undefined) =>
  traceparent ? { ...headers, traceparent } : headers;

/** A pooled connection the origin had closed meanwhile failed before any answer: worth one retry on a new one. */
class StalePooledConnection extends Error {}

interface Target {
  url: URL;
  /** Host without IPv6 brackets, as resolved and as sent in SNI. */
  hostname: string;
  /** The single checked address the socket is pinned to. */
  address: string;
  family: 4 | 6;
}

export function createNodeFetchOrigin(options: NodeFetchOriginOptions = {}): FetchOrigin {
  const allowPrivate = options.allowPrivate ?? false;
  const totalTimeoutMs = options.totalTimeoutMs ?? 60_000;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const userAgent = options.userAgent ?? "content-resource-service";
  const lookup: LookupAll = options.lookup ?? dns.lookup;
  const guard = createOriginGuard({
    subject: options.subject,
    allowPrivate,
    isAllowedAddress: options.isAllowedAddress,
  });
  const { problem } = guard;
  const { name } = guard.subject;
  const idleConnectionMs = options.idleConnectionMs ?? 2_000;
  // One pool per fetcher: a socket checked under this fetcher's address policy is never reused under another's.
  const pool =
    idleConnectionMs > 0
      ? createConnectionPool({ maxIdlePerKey: IDLE_CONNECTIONS_PER_KEY, maxKeys: POOL_KEYS, idleMs: idleConnectionMs })
      : null;

  /** Resolves the host once and checks every address; throws ORIGIN_REFUSED before any connection. */
  const resolveTarget = async (url: URL, signal: AbortSignal): Promise<Target> => {
    const hostname = unbracket(url.hostname);
    const literal = ipVersion(hostname);
    // Node never calls `lookup` for IP literals: the guard checked them with the URL (guard.checkUrl).
    if (literal !== 0) return { url, hostname, address: hostname, family: literal };
    const addresses = await new Promise<LookupAddress[]>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        settle();
        reject(signal.reason);
      };
      // DNS counts against the connect budget: a resolver that never answers must not hang the fetch.
      const timer = setTimeout(() => {
        settle();
        reject(problem("ORIGIN_TIMEOUT", `${name} host ${hostname} was not resolved within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      lookup(hostname, { all: true }, (err, result) => {
        settle();
        if (err) {
          reject(
            problem(
              "ORIGIN_FAILED",
              `${name} host ${hostname} could not be resolved (${err.code ?? err.message})`,
              err,
            ),
          );
        } else {
          resolve(result);
        }
      });
    });
    if (addresses.length === 0) throw problem("ORIGIN_FAILED", `${name} host ${hostname} resolved to no address`);
    // Any refused address refuses the host: round-robin DNS could otherwise pick it later.
    for (const { address } of addresses) guard.checkAddress(hostname, address);
    const first = addresses[0] as LookupAddress;
    return { url, hostname, address: first.address, family: first.family === 6 ? 6 : 4 };
  };

  /**
   * Sends one GET pinned to `target.address`, on a pooled connection to that address when there is
   * one (unless `fresh`); resolves with the response head.
   */
  const request = (target: Target, signal: AbortSignal, fresh: boolean, send?: OriginSend): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const { url, hostname, address, family } = target;
      // Answers Node's own lookup with the already-checked address: no second DNS query (rebinding-safe).
      const pinned: LookupFunction = (_host, opts, callback) => {
        if (opts.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      };
      const isLiteral = ipVersion(hostname) !== 0;
      const tls = url.protocol === "https:";
      const transport = tls ? https : http;
      const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
      const req: ClientRequest = transport.request({
        method: send?.method ?? "GET",
        protocol: url.protocol,
        hostname,
        port,
        path: `${url.pathname}${url.search}`,
        lookup: pinned,
        family,
        ...(url.protocol === "https:" && !isLiteral ? { servername: hostname } : {}),
        agent: pool && !fresh ? pool.agentFor({ tls, address, port, hostname }) : false,
        // No Authorization/Cookie ever; identity encoding keeps byte counts real.
        headers: withTraceparent(
          {
            ...send?.headers,
            ...(send ? { "Content-Length": String(send.body.byteLength) } : {}),
            Host: url.host,
            Accept: "*/*",
            "User-Agent": userAgent,
            "Accept-Encoding": "identity",
          },
          options.traceparent?.(),
        ),
      });

      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const fail = (err: unknown) => {
        settle();
        req.destroy();
        reject(err);
      };
      const onAbort = () => fail(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });

      timer = setTimeout(
        () =>
          fail(problem("ORIGIN_TIMEOUT", `${name} origin ${url.host} did not connect within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      const onConnected = (socket: Socket) => {
        // Defence in depth (e.g. a runtime that ignores `lookup`): the connected peer itself must be allowed.
        // This runs before the buffered request is flushed, so a refused peer receives nothing.
        try {
          guard.checkAddress(hostname, socket.remoteAddress ?? "unknown");
        } catch (refused) {
          fail(refused);
          return;
        }
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            fail(
              problem(
                "ORIGIN_TIMEOUT",
                `${name} origin ${url.host} sent no response headers within ${idleTimeoutMs} ms`,
              ),
            ),
          idleTimeoutMs,
        );
      };
      req.on("socket", (socket: Socket) => {
        // A pooled socket is connected (and its TLS done) already, to this same checked address.
        if (req.reusedSocket) return onConnected(socket);
        const event = tls ? "secureConnect" : "connect";
        if (socket.connecting || event === "secureConnect") socket.once(event, () => onConnected(socket));
        else onConnected(socket);
      });
      let response: IncomingMessage | null = null;
      req.on("response", (res) => {
        response = res;
        settle();
        resolve(res);
      });
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (response) {
          // After the head the body fails with it, at once (req.destroy() would drain it silently and
          // leave the body stream waiting for the total timeout). A parse error here means bytes past
          // the declared Content-Length, or a broken chunked encoding.
          const what = err.code?.startsWith("HPE_")
            ? `sent a malformed body, e.g. more bytes than its Content-Length (${err.code})`
            : `failed while sending the body (${err.code ?? err.message})`;
          response.destroy(problem("ORIGIN_FAILED", `${name} origin ${url.host} ${what}`, err));
          return;
        }
        if (signal.aborted) return fail(signal.reason);
        // The origin closed an idle pooled connection as we reused it (a GET: safe to send again).
        if (req.reusedSocket && (err.code === "ECONNRESET" || err.code === "EPIPE"))
          return fail(new StalePooledConnection(err.code));
        fail(
          problem("ORIGIN_FAILED", `${name} origin ${url.host} could not be reached (${err.code ?? err.message})`, err),
        );
      });
      req.end(send ? Buffer.from(send.body.buffer, send.body.byteOffset, send.body.byteLength) : undefined);
    });

  return followRedirects({
    guard,
    totalTimeoutMs,
    maxRedirects,
    validateUrl: guard.checkUrl,
    hop: async (url, signal, send) => {
      const target = await resolveTarget(url, signal);
      signal.throwIfAborted();
      const res = await request(target, signal, false, send).catch((err: unknown) => {
        if (!(err instanceof StalePooledConnection)) throw err;
        return request(target, signal, true, send);
      });
      return {
        status: res.statusCode ?? 0,
        statusText: res.statusMessage,
        location: res.headers.location ?? null,
        discard: () => {
          res.destroy();
        },
        accept: (dispose) => toOriginResponse(res, url, signal, idleTimeoutMs, dispose, guard),
      };
    },
  });
}

function toOriginResponse(
  res: IncomingMessage,
  url: URL,
  signal: AbortSignal,
  idleTimeoutMs: number,
  dispose: () => void,
  guard: OriginGuard,
): OriginResponse {
  return {
    body: bodyStream(res, url, signal, idleTimeoutMs, dispose, guard),
    contentType: res.headers["content-type"] ?? null,
    contentLength: parseContentLength(res.headers["content-length"]),
    reprSha256: parseReprSha256(res.headers["repr-digest"] as string | undefined),
    url: url.href,
    status: res.statusCode ?? 0,
  };
}

/**
 * Pull-based Web stream over the response: one `read()` per `pull()`, so Node only fills its own
 * small buffer and TCP flow control holds the origin back (no Readable.toWeb, no eager push).
 */
function bodyStream(
  res: IncomingMessage,
  url: URL,
  signal: AbortSignal,
  idleTimeoutMs: number,
  dispose: () => void,
  guard: OriginGuard,
): ReadableStream<Uint8Array> {
  const { problem } = guard;
  const { name } = guard.subject;
  let failure: unknown = null;
  let ended = false;
  let finished = false;
  let waiter: (() => void) | null = null;
  let idleTimer: NodeJS.Timeout | undefined;
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | null = null;

  const wake = () => {
    const w = waiter;
    waiter = null;
    w?.();
  };
  const finish = () => {
    if (finished) return;
    finished = true;
    clearTimeout(idleTimer);
    signal.removeEventListener("abort", onAbort);
    dispose();
  };
  const fail = (err: unknown) => {
    if (failure !== null || ended) return;
    failure = err;
    finish();
    res.destroy();
    // Errors the stream even when no pull() is pending, e.g. the total timeout while the consumer is idle.
    try {
      controllerRef?.error(err);
    } catch {
      // Already closed or errored.
    }
    wake();
  };
  const onAbort = () => fail(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });

  // The response may have failed or ended before this stream was built (the redirect loop awaits in between).
  if (res.errored) fail(res.errored);
  else if (res.readableEnded) ended = true;
  else if (res.destroyed)
    fail(problem("ORIGIN_FAILED", `${name} origin ${url.host} closed the connection before the body was complete`));

  res.on("readable", wake);
  res.on("end", () => {
    ended = true;
    wake();
  });
  res.on("error", (err: NodeJS.ErrnoException) => {
    fail(
      problem(
        "ORIGIN_FAILED",
        `${name} origin ${url.host} failed while sending the body (${err.code ?? err.message})`,
        err,
      ),
    );
  });
  res.on("close", () => {
    if (!ended && !res.complete) {
      fail(problem("ORIGIN_FAILED", `${name} origin ${url.host} closed the connection before the body was complete`));
    }
  });

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        if (signal.aborted) onAbort();
      },
      async pull(controller) {
        for (;;) {
          if (failure !== null) throw failure;
          const chunk: Buffer | null = res.read();
          if (chunk !== null) {
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            return;
          }
          if (ended) {
            finish();
            controller.close();
            return;
          }
          // Only time spent waiting on the origin counts as idle, not time the consumer is not reading.
          await new Promise<void>((resolve) => {
            waiter = resolve;
            idleTimer = setTimeout(
              () => fail(problem("ORIGIN_TIMEOUT", `${name} origin ${url.host} sent no data for ${idleTimeoutMs} ms`)),
              idleTimeoutMs,
            );
          });
          clearTimeout(idleTimer);
        }
      },
      cancel() {
        // Cancelling destroys the socket so the origin stops sending.
        ended = true;
        finish();
        res.destroy();
        wake();
      },
    },
    { highWaterMark: 0 },
  );
}
