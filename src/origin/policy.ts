/**
 * The runtime-neutral half of the SSRF-safe `FetchOrigin`s (node-fetch.ts pins checked
 * addresses, worker-fetch.ts judges by name): the redirect loop under one total budget, every hop
 * checked by the guard (guard.ts), and the response headers read. Web APIs only, so the Worker can use it.
 */
import { parseSha256Digest } from "../lib/digest-fields.js";
import type { FetchOrigin, OriginResponse, OriginSend } from "./fetch-origin.js";
import type { OriginGuard } from "./guard.js";

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

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
  /** Whose problems these are: the guarded URL's name and field. */
  guard: OriginGuard;
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
  const { guard, totalTimeoutMs, maxRedirects, validateUrl, hop: send } = options;
  const { name } = guard.subject;
  return async (rawUrl, fetchOptions = {}) => {
    const external = fetchOptions.signal;
    external?.throwIfAborted();
    // One controller for the whole fetch: aborted by the caller or by the total timeout, body included.
    const controller = new AbortController();
    const onExternalAbort = () => controller.abort(external?.reason);
    external?.addEventListener("abort", onExternalAbort, { once: true });
    const totalTimer = setTimeout(
      () => controller.abort(guard.problem("ORIGIN_TIMEOUT", `${name} was not fetched within ${totalTimeoutMs} ms`)),
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
          if (maxRedirects === 0)
            throw guard.problem("ORIGIN_FAILED", `${name} answered ${res.status}, a redirect, which is not followed`);
          if (hop >= maxRedirects)
            throw guard.problem("ORIGIN_FAILED", `${name} redirected more than ${maxRedirects} times`);
          // Relative Locations resolve against the current URL; the next hop is validated like the first.
          let next: URL;
          try {
            next = new URL(res.location, url);
          } catch {
            throw guard.problem("ORIGIN_FAILED", `${name} redirected to an invalid Location`);
          }
          url = validateUrl(next);
          continue;
        }
        if ((res.status < 200 || res.status > 299) && !fetchOptions.anyStatus) {
          await res.discard();
          const text = res.statusText ? ` ${res.statusText}` : "";
          throw guard.problem("ORIGIN_FAILED", `${name} origin answered ${res.status}${text}`);
        }
        return res.accept(dispose);
      }
    } catch (err) {
      dispose();
      throw err;
    }
  };
}
