/**
 * The runtime-neutral half of the SSRF-safe `FetchOrigin`s (node-fetch.ts pins checked
 * addresses, worker-fetch.ts judges by name): URL checks, the redirect loop under one
 * total budget, and the problem shape. Web APIs only, so the Worker can use it.
 */
import { parseSha256Digest } from "../lib/digest-fields.js";
import { ProblemError, type ProblemCode } from "../problems.js";
import type { FetchOrigin, OriginResponse, OriginSend } from "./fetch-origin.js";

const FIELD = "/body/resourceExternalURI";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** A ProblemError pointing at the request field the external URI came from. */
export const originProblem = (code: ProblemCode, detail: string, cause?: unknown) =>
  new ProblemError(code, detail, { errors: [{ pointer: FIELD, detail }], cause });

/**
 * The refusal of a host in a special-purpose range (loopback, private use, …), naming the setting
 * that allows it: a developer fetching from their own machine learns what to change.
 */
export const refusedHost = (shown: string, why: string) =>
  originProblem(
    "ORIGIN_REFUSED",
    `resourceExternalURI host ${shown} is not allowed: ${why}; set CMS_FETCH_ALLOW_PRIVATE=true to allow non-public hosts (development only)`,
  );

/** Parses an external URI and checks its scheme, credentials, host and port; throws ORIGIN_REFUSED. */
export function parseOriginUrl(raw: string | URL): URL {
  let url: URL;
  try {
    // WHATWG parsing normalises 2130706433, 0x7f.1, 0177.0.0.1, 127.1 … to dotted decimal.
    url = new URL(raw);
  } catch {
    throw originProblem("ORIGIN_REFUSED", "resourceExternalURI is not a valid absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw originProblem(
      "ORIGIN_REFUSED",
      `resourceExternalURI scheme ${url.protocol} is not allowed (only http: and https:)`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw originProblem("ORIGIN_REFUSED", "resourceExternalURI must not contain credentials (userinfo)");
  }
  if (url.hostname === "") throw originProblem("ORIGIN_REFUSED", "resourceExternalURI has no host");
  if (url.port === "0") throw originProblem("ORIGIN_REFUSED", "resourceExternalURI port 0 is not allowed");
  return url;
}

/** A Content-Length value as a safe integer; null when absent or not a plain decimal number. */
export function parseContentLength(raw: string | null | undefined): number | null {
  const length = raw != null && /^\d+$/.test(raw) ? Number(raw) : null;
  return length !== null && Number.isSafeInteger(length) ? length : null;
}

/**
 * The SHA-256 (hex) of an origin's `Repr-Digest` field (RFC 9530), or null. A field that is absent,
 * names only other algorithms or is malformed is ignored: it is the origin's fault, not the caller's.
 */
export function parseReprSha256(raw: string | null | undefined): string | null {
  const parsed = parseSha256Digest(raw);
  return parsed.kind === "sha256" ? parsed.hex : null;
}

/** One hop's response head, as the redirect loop needs it. */
export interface OriginHop {
  status: number;
  statusText: string | undefined;
  location: string | null;
  /** Drops the body of a response that is not used (a redirect or an error status). */
  discard(): void | Promise<void>;
  /** The 2xx response as the service sees it; `dispose` must run once its body is done. */
  accept(dispose: () => void): OriginResponse;
}

export interface RedirectLoopOptions {
  /** Budget for the whole fetch, body included. */
  totalTimeoutMs: number;
  /** Redirects followed before failing with ORIGIN_FAILED. */
  maxRedirects: number;
  /** Checks the first URL and every redirect target; throws ORIGIN_REFUSED. */
  validateUrl: (raw: string | URL) => URL;
  /** Sends one GET (or `send`) to `url` without following redirects. */
  hop: (url: URL, signal: AbortSignal, send?: OriginSend) => Promise<OriginHop>;
}

/** A `FetchOrigin` that validates, sends each hop through `options.hop` and follows redirects by hand. */
export function followRedirects(options: RedirectLoopOptions): FetchOrigin {
  const { totalTimeoutMs, maxRedirects, validateUrl, hop: send } = options;
  return async (rawUrl, fetchOptions = {}) => {
    const external = fetchOptions.signal;
    external?.throwIfAborted();
    // One controller for the whole fetch: aborted by the caller or by the total timeout, body included.
    const controller = new AbortController();
    const onExternalAbort = () => controller.abort(external?.reason);
    external?.addEventListener("abort", onExternalAbort, { once: true });
    const totalTimer = setTimeout(
      () =>
        controller.abort(
          originProblem("ORIGIN_TIMEOUT", `resourceExternalURI was not fetched within ${totalTimeoutMs} ms`),
        ),
      totalTimeoutMs,
    );
    const dispose = () => {
      clearTimeout(totalTimer);
      external?.removeEventListener("abort", onExternalAbort);
    };

    try {
      let url = validateUrl(rawUrl);
      for (let hop = 0; ; hop++) {
        const res = await send(url, controller.signal, fetchOptions.send);
        if (REDIRECT_STATUSES.has(res.status) && res.location !== null) {
          await res.discard();
          if (hop >= maxRedirects) {
            throw originProblem("ORIGIN_FAILED", `resourceExternalURI redirected more than ${maxRedirects} times`);
          }
          // Relative Locations resolve against the current URL; the next hop is validated like the first.
          let next: URL;
          try {
            next = new URL(res.location, url);
          } catch {
            throw originProblem("ORIGIN_FAILED", "resourceExternalURI redirected to an invalid Location");
          }
          url = validateUrl(next);
          continue;
        }
        if ((res.status < 200 || res.status > 299) && !fetchOptions.anyStatus) {
          await res.discard();
          const text = res.statusText ? ` ${res.statusText}` : "";
          throw originProblem("ORIGIN_FAILED", `resourceExternalURI origin answered ${res.status}${text}`);
        }
        return res.accept(dispose);
      }
    } catch (err) {
      dispose();
      throw err;
    }
  };
}
