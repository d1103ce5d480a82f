/**
 * SSRF-safe `FetchOrigin` for Workers (Web APIs only): the global `fetch`, redirects followed by
 * hand so every hop is checked. Workers cannot resolve names before connecting, so the policy is
 * by URL: IP literals in any spelling and private names are refused outright.
 */
import { ProblemError, type ProblemCode } from "../errors.js";
import { ipVersion, unbracket } from "../lib/ip-address.js";
import type { FetchOrigin, OriginResponse } from "../services/origin.js";

export interface WorkerFetchOriginOptions {
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

const FIELD = "/body/resourceExternalURI";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Special-use and internal DNS suffixes (RFC 6761, RFC 6762 `.local`, `.arpa` incl. RFC 8375 `.home.arpa`,
 * ICANN's reserved `.internal`) and common private conventions. A single-label name (no dot) is
 * refused too: it is resolved through search domains, i.e. on the local network.
 */
const PRIVATE_SUFFIXES = [
  "localhost",
  "local",
  "internal",
  "intranet",
  "private",
  "corp",
  "home",
  "lan",
  "arpa",
  "test",
  "invalid",
  "example",
  "onion",
];

const problem = (code: ProblemCode, detail: string, cause?: unknown) =>
  new ProblemError(code, detail, { errors: [{ pointer: FIELD, detail }], cause });

/** Why `hostname` (as `new URL` normalised it) is refused by name, or null when it is a public DNS name. */
export function privateHostReason(hostname: string): string | null {
  const host = unbracket(hostname).toLowerCase().replace(/\.$/, "");
  // WHATWG parsing already turned 2130706433, 0x7f.1, 0177.1 … into dotted decimal, so one check covers all spellings.
  if (ipVersion(host) !== 0) return "IP address literals are not allowed (use a DNS name)";
  // Anything else shaped like a number would be an address to some resolver; never a real DNS name.
  if (/^[0-9.]+$/.test(host) || /^0x[0-9a-f]+$/i.test(host) || host.includes(":")) return "address-like hosts are not allowed";
  if (!host.includes(".")) return "single-label names resolve on the local network";
  const suffix = PRIVATE_SUFFIXES.find((s) => host === s || host.endsWith(`.${s}`));
  if (suffix) return `.${suffix} names are private or reserved`;
  return null;
}

export function createWorkerFetchOrigin(options: WorkerFetchOriginOptions = {}): FetchOrigin {
  const allowPrivate = options.allowPrivate ?? false;
  const totalTimeoutMs = options.totalTimeoutMs ?? 60_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  const userAgent = options.userAgent ?? "content-resource-service";
  const fetchHop = options.fetch ?? ((input, init) => fetch(input, init));

  const validateUrl = (raw: string | URL): URL => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw problem("ORIGIN_REFUSED", "resourceExternalURI is not a valid absolute URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw problem("ORIGIN_REFUSED", `resourceExternalURI scheme ${url.protocol} is not allowed (only http: and https:)`);
    }
    if (url.username !== "" || url.password !== "") {
      throw problem("ORIGIN_REFUSED", "resourceExternalURI must not contain credentials (userinfo)");
    }
    if (url.hostname === "") throw problem("ORIGIN_REFUSED", "resourceExternalURI has no host");
    if (url.port === "0") throw problem("ORIGIN_REFUSED", "resourceExternalURI port 0 is not allowed");
    const why = allowPrivate ? null : privateHostReason(url.hostname);
    if (why) throw problem("ORIGIN_REFUSED", `resourceExternalURI host ${url.hostname} is not allowed: ${why}`);
    return url;
  };

  /** One GET without following redirects; rejects with a ProblemError (or the abort reason). */
  const request = async (url: URL, signal: AbortSignal): Promise<Response> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(problem("ORIGIN_TIMEOUT", `resourceExternalURI origin ${url.host} sent no response headers within ${idleTimeoutMs} ms`)),
        idleTimeoutMs,
      );
    });
    const hop = fetchHop(url.href, {
      method: "GET",
      redirect: "manual",
      signal,
      // No Authorization/Cookie ever; identity encoding keeps byte counts real.
      headers: { Accept: "*/*", "User-Agent": userAgent, "Accept-Encoding": "identity" },
    });
    try {
      return await Promise.race([hop, idle]);
    } catch (err) {
      hop.then((res) => res.body?.cancel().catch(() => {})).catch(() => {});
      if (signal.aborted) throw signal.reason;
      if (err instanceof ProblemError) throw err;
      const message = err instanceof Error ? err.message : String(err);
      throw problem("ORIGIN_FAILED", `resourceExternalURI origin ${url.host} could not be reached (${message})`, err);
    } finally {
      clearTimeout(timer);
    }
  };

  return async (rawUrl, fetchOptions = {}) => {
    const external = fetchOptions.signal;
    external?.throwIfAborted();
    // One controller for the whole fetch: aborted by the caller or by the total timeout, body included.
    const controller = new AbortController();
    const onExternalAbort = () => controller.abort(external?.reason);
    external?.addEventListener("abort", onExternalAbort, { once: true });
    const totalTimer = setTimeout(
      () => controller.abort(problem("ORIGIN_TIMEOUT", `resourceExternalURI was not fetched within ${totalTimeoutMs} ms`)),
      totalTimeoutMs,
    );
    const dispose = () => {
      clearTimeout(totalTimer);
      external?.removeEventListener("abort", onExternalAbort);
    };

    try {
      let url = validateUrl(rawUrl);
      for (let hop = 0; ; hop++) {
        const res = await request(url, controller.signal);
        const location = res.headers.get("location");
        if (REDIRECT_STATUSES.has(res.status) && location !== null) {
          await res.body?.cancel().catch(() => {});
          if (hop >= maxRedirects) {
            throw problem("ORIGIN_FAILED", `resourceExternalURI redirected more than ${maxRedirects} times`);
          }
          // Relative Locations resolve against the current URL; the next hop is validated like the first.
          let next: URL;
          try {
            next = new URL(location, url);
          } catch {
            throw problem("ORIGIN_FAILED", "resourceExternalURI redirected to an invalid Location");
          }
          url = validateUrl(next);
          continue;
        }
        if (res.status < 200 || res.status > 299) {
          await res.body?.cancel().catch(() => {});
          const text = res.statusText ? ` ${res.statusText}` : "";
          throw problem("ORIGIN_FAILED", `resourceExternalURI origin answered ${res.status}${text}`);
        }
        return toOriginResponse(res, url, controller.signal, idleTimeoutMs, dispose);
      }
    } catch (err) {
      dispose();
      throw err;
    }
  };
}

function toOriginResponse(res: Response, url: URL, signal: AbortSignal, idleTimeoutMs: number, dispose: () => void): OriginResponse {
  const rawLength = res.headers.get("content-length");
  const contentLength = rawLength !== null && /^\d+$/.test(rawLength) ? Number(rawLength) : null;
  return {
    body: bodyStream(res.body, url, signal, idleTimeoutMs, dispose),
    contentType: res.headers.get("content-type"),
    contentLength: contentLength !== null && Number.isSafeInteger(contentLength) ? contentLength : null,
    url: url.href,
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
): ReadableStream<Uint8Array> {
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
              () => reject(problem("ORIGIN_TIMEOUT", `resourceExternalURI origin ${url.host} sent no data for ${idleTimeoutMs} ms`)),
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
          throw problem("ORIGIN_FAILED", `resourceExternalURI origin ${url.host} failed while sending the body (${message})`, err);
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
