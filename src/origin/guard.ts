/**
 * The SSRF guard: the one policy for every URL the server fetches or posts to for a caller (a
 * resource's external URI, a webhook's receiver). It checks the URL's shape and an address-literal or
 * localhost host before anything else; node-fetch.ts asks it about each address a name resolved to
 * and about the connected peer, worker-fetch.ts (which sees no addresses) judges by name. Its
 * problems name the URL as its caller knows it (`subject`), so no caller rewrites their text.
 */
import { type ProblemCode, ProblemError } from "../problems.js";
import { isLocalhostName, privateHostReason } from "./host-names.js";
import { ipVersion, isGlobalUnicast, specialPurposeRange, unbracket } from "./ip-address.js";

/** What the guarded URL is called in problems, and the request field it came from. */
export interface UrlSubject {
  name: string;
  /** JSON pointer of the field, in each problem's `errors`. */
  pointer: string;
}

export const EXTERNAL_URI: UrlSubject = { name: "resourceExternalURI", pointer: "/body/resourceExternalURI" };
/** A webhook's receiver: the subscription's `url`, and what its deliveries' errors speak of. */
export const WEBHOOK_URL: UrlSubject = { name: "webhook URL", pointer: "/json/url" };

export interface OriginGuardOptions {
  /** @default EXTERNAL_URI */
  subject?: UrlSubject;
  /**
   * Allow loopback, private and other non-global hosts (CMS_FETCH_ALLOW_PRIVATE). Development and tests only.
   * @default false
   */
  allowPrivate?: boolean;
  /**
   * Tests only: the address policy for address literals, resolved addresses and connected peers.
   * @default allowPrivate ? () => true : isGlobalUnicast
   */
  isAllowedAddress?: (address: string) => boolean;
}

export interface OriginGuard {
  readonly subject: UrlSubject;
  /** A problem about the guarded URL, pointing at its field. */
  problem(code: ProblemCode, detail: string, cause?: unknown): ProblemError;
  /**
   * Scheme (http/https), no credentials, a host, not port 0; an address-literal host must be an
   * allowed address and a localhost name is loopback. Throws ORIGIN_REFUSED.
   */
  checkUrl(raw: string | URL): URL;
  /**
   * Where addresses are not seen before connecting (Workers): the same shape checks, then the by-name
   * policy (host-names.ts), which refuses address literals of any kind and private names.
   */
  checkUrlByName(raw: string | URL): URL;
  /** Throws ORIGIN_REFUSED unless `address`, which `host` resolved to (or the peer connected to), is allowed. */
  checkAddress(host: string, address: string): void;
}

export function createOriginGuard(options: OriginGuardOptions = {}): OriginGuard {
  const subject = options.subject ?? EXTERNAL_URI;
  const { name } = subject;
  const allowPrivate = options.allowPrivate ?? false;
  const isAllowed = options.isAllowedAddress ?? (allowPrivate ? () => true : isGlobalUnicast);

  const problem = (code: ProblemCode, detail: string, cause?: unknown) =>
    new ProblemError(code, detail, { errors: [{ pointer: subject.pointer, detail }], cause });
  const refused = (detail: string) => problem("ORIGIN_REFUSED", detail);
  // A developer fetching from their own machine learns which setting allows it.
  const refusedHost = (shown: string, why: string) =>
    refused(
      `${name} host ${shown} is not allowed: ${why}; set CMS_FETCH_ALLOW_PRIVATE=true to allow non-public hosts (development only)`,
    );

  const checkAddress = (host: string, address: string) => {
    if (isAllowed(address)) return;
    const shown = host === address ? address : `${host} (resolves to ${address})`;
    const why = specialPurposeRange(address);
    throw why ? refusedHost(shown, why) : refused(`${name} host ${shown} is not allowed: refused by address policy`);
  };

  /** Scheme, credentials, host and port: what every runtime checks first. */
  const checkShape = (raw: string | URL): URL => {
    let url: URL;
    try {
      // WHATWG parsing normalises 2130706433, 0x7f.1, 0177.0.0.1, 127.1 … to dotted decimal.
      url = new URL(raw);
    } catch {
      throw refused(`${name} is not a valid absolute URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw refused(`${name} scheme ${url.protocol} is not allowed (only http: and https:)`);
    if (url.username !== "" || url.password !== "") throw refused(`${name} must not contain credentials (userinfo)`);
    if (url.hostname === "") throw refused(`${name} has no host`);
    if (url.port === "0") throw refused(`${name} port 0 is not allowed`);
    return url;
  };

  const checkUrl = (raw: string | URL): URL => {
    const url = checkShape(raw);
    const host = unbracket(url.hostname);
    if (ipVersion(host) !== 0) checkAddress(host, host);
    else if (!allowPrivate && isLocalhostName(host)) throw refusedHost(host, "localhost names are loopback (RFC 6761)");
    return url;
  };

  return {
    subject,
    problem,
    checkUrl,
    checkUrlByName(raw) {
      const url = checkShape(raw);
      const why = allowPrivate ? null : privateHostReason(url.hostname);
      if (why) throw refusedHost(url.hostname, why);
      return url;
    },
    checkAddress,
  };
}
