/**
 * SSRF-safe `FetchOrigin` for Workers (Web APIs only): the global `fetch`, redirects followed by
 * hand so every hop is checked. Workers cannot resolve names before connecting, so the policy is
 * by URL: IP literals in any spelling and private names are refused outright.
 */
import { ProblemError } from "../problems.js";
import type { FetchOrigin, OriginResponse, OriginSend } from "./fetch-origin.js";
import { createOriginGuard, type OriginGuard, type UrlSubject } from "./guard.js";
import { followRedirects, parseContentLength, parseReprSha256 } from "./policy.js";

export interface WorkerFetchOriginOptions {
  /**
   * What problems call the URL, and its field.
   * @default EXTERNAL_URI (guard.ts)
   */
  subject?: UrlSubject;
  /**
   * Allow IP literals and private names (localhost, *.internal, single labels…). Development and
   * tests only (`wrangler dev` against a loopback origin).
   * @default false
   */
  allowPrivate?: boolean;
  /**
   * Budget for the whole fetch: redirects, headers and the entire body.
   * @default 60_000
   */
  totalTimeoutMs?: number;
  /**
   * Longest wait for response headers of one hop, and for each next body chunk while the consumer reads.
   * @default 30_000
   */
  idleTimeoutMs?: number;
  /**
   * Redirects followed before failing with ORIGIN_FAILED; each hop is re-validated.
   * @default 5
   */
  maxRedirects?: number;
  /**
   * Value of the User-Agent request header.
   * @default "content-resource-service"
   */
  userAgent?: string;
  /**
   * Tests only: the fetch used for every hop.
   * @default globalThis.fetch
   */
  fetch?: typeof fetch;
}

export function createWorkerFetchOrigin(options: WorkerFetchOriginOptions = {}): FetchOrigin {
  const allowPrivate = options.allowPrivate ?? false;
  const totalTimeoutMs = options.totalTimeoutMs ?? 60_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const userAgent = options.userAgent ?? "content-resource-service";
  const fetchHop = options.fetch ?? ((input, init) => fetch(input, init));

  // By name: Workers cannot check addresses before connecting.
  const guard = createOriginGuard({ subject: options.subject, allowPrivate });
  const { problem } = guard;
  const { name } = guard.subject;

  /** One GET without following redirects; rejects with a ProblemError (or the abort reason). */
  const request = async (url: URL, signal: AbortSignal, send?: OriginSend): Promise<Response> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            problem("ORIGIN_TIMEOUT", `${name} origin ${url.host} sent no response headers within ${idleTimeoutMs} ms`),
          ),
        idleTimeoutMs,
      );
    });
    const hop = fetchHop(url.href, {
      method: send?.method ?? "GET",
      redirect: "manual",
      signal,
      ...(send ? { body: send.body } : {}),
      // No Authorization/Cookie ever; identity encoding keeps byte counts real.
      headers: { ...send?.headers, Accept: "*/*", "User-Agent": userAgent, "Accept-Encoding": "identity" },
    });
    try {
      return await Promise.race([hop, idle]);
    } catch (err) {
      hop.then((res) => res.body?.cancel().catch(() => {})).catch(() => {});
      if (signal.aborted) throw signal.reason;
      if (err instanceof ProblemError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw problem("ORIGIN_FAILED", `${name} origin ${url.host} could not be reached (${message})`, err);
    } finally {
      clearTimeout(timer);
    }
  };

  return followRedirects({
    guard,
    totalTimeoutMs,
    maxRedirects,
    validateUrl: guard.checkUrlByName,
    hop: async (url, signal, send) => {
      const res = await request(url, signal, send);
      return {
        status: res.status,
        statusText: res.statusText,
        location: res.headers.get("location"),
        discard: () => res.body?.cancel().catch(() => {}),
        accept: (dispose) => toOriginResponse(res, url, signal, idleTimeoutMs, dispose, guard),
      };
    },
  });
}

function toOriginResponse(
  res: Response,
  url: URL,
  signal: AbortSignal,
  idleTimeoutMs: number,
  dispose: () => void,
  guard: OriginGuard,
): OriginResponse {
  return {
    body: bodyStream(res.body, url, signal, idleTimeoutMs, dispose, guard),
    contentType: res.headers.get("content-type"),
    contentLength: parseContentLength(res.headers.get("content-length")),
    reprSha256: parseReprSha256(res.headers.get("repr-digest")),
    url: url.href,
    status: res.status,
  };
}

/**
 * Pull-based wrapper over the response body: one read per pull (backpressure), an idle timer while
 * waiting on the origin, and the total-timeout/caller abort surfacing as the stream's error.
 */
function bodyStream(
  body: ReadableStream<Uint8Array> | null,
  url: URL,
  signal: AbortSignal,
  idleTimeoutMs: number,
  dispose: () => void,
  guard: OriginGuard,
): ReadableStream<Uint8Array> {
  const { problem } = guard;
  const { name } = guard.subject;
  if (body === null) {
    dispose();
    return new ReadableStream({ start: (c) => c.close() });
  }
  const reader = body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    dispose();
  };
  const aborted = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  aborted.catch(() => {}); // observed by the race below; never an unhandled rejection

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        try {
          const idle = new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(problem("ORIGIN_TIMEOUT", `${name} origin ${url.host} sent no data for ${idleTimeoutMs} ms`)),
              idleTimeoutMs,
            );
          });
          const read = await Promise.race([reader.read(), idle, aborted]);
          if (read.done) {
            finish();
            controller.close();
            return;
          }
          controller.enqueue(read.value);
        } catch (err) {
          finish();
          reader.cancel(err).catch(() => {});
          if (signal.aborted) throw signal.reason;
          if (err instanceof ProblemError) throw err;
          const message = err instanceof Error ? err.message : String(err);
          throw problem("ORIGIN_FAILED", `${name} origin ${url.host} failed while sending the body (${message})`, err);
        } finally {
          clearTimeout(timer);
        }
      },
      cancel(reason) {
        // Cancelling stops the download so the origin stops sending.
        finish();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
