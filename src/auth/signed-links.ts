/**
 * Signed, expiring getData links: an HMAC-SHA256 over the exact path and expiry, so a browser can
 * fetch one resource without a token, only until the link expires.
 */

import { type HmacOf, webCryptoHmac } from "../lib/hmac.js";

const encoder = new TextEncoder();

/** Whether `a` and `b` hold the same bytes, in a time that does not depend on where they differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

const toBase64Url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return null; // a SHA-256 MAC is exactly 43 chars unpadded
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/**
 * What a link signs for a getData path: the path, and the version of a versioned URL (`?v=`), so a
 * link made for one version reads that version only. The guard and the runtimes' fast paths both
 * ask it.
 */
export const signedTarget = (path: string, version: string | null | undefined): string =>
  version === null || version === undefined ? path : `${path}?v=${version}`;

// The method is part of the signed text so a link can never authorise anything but a read.
const message = (path: string, expires: number) => encoder.encode(`GET\n${path}\n${expires}`);

export interface LinkSigner {
  /** Query string (`expires=…&signature=…`) that authorises GET/HEAD of `path` until `expires` (epoch seconds). */
  sign(path: string, expires: number): Promise<string>;
  /** True when the signature matches `path` and `expires` lies in the future. Constant-time compare. */
  verify(
    path: string,
    expires: string | undefined,
    signature: string | undefined,
    nowSeconds: number,
  ): Promise<boolean>;
  /**
   * `verify`'s answer in this call, when the HMAC gives one synchronously (node:crypto's, on Node
   * and Bun: the runtimes' fast paths check links with it); null when it cannot (Web Crypto's).
   */
  verifyNow(
    path: string,
    expires: string | undefined,
    signature: string | undefined,
    nowSeconds: number,
  ): boolean | null;
}

/** What a link claims: its MAC and expiry (epoch seconds), or null when `expires` or `signature` cannot be a link's. */
function claimOf(expires: string | undefined, signature: string | undefined) {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return null;
  const mac = fromBase64Url(signature);
  return mac && { mac, expiresAt: Number(expires) };
}

export async function createLinkSigner(secret: string, hmacOf: HmacOf = webCryptoHmac): Promise<LinkSigner> {
  const hmac = await hmacOf(encoder.encode(secret));
  // Whether this HMAC answers in the call (asked once, of an empty message).
  const probe = hmac(new Uint8Array(0));
  const synchronous = !(probe instanceof Promise);
  if (!synchronous) probe.catch(() => {});
  return {
    async sign(path, expires) {
      return `expires=${expires}&signature=${toBase64Url(await hmac(message(path, expires)))}`;
    },
    async verify(path, expires, signature, nowSeconds) {
      const claim = claimOf(expires, signature);
      if (!claim) return false;
      return sameBytes(await hmac(message(path, claim.expiresAt)), claim.mac) && claim.expiresAt > nowSeconds;
    },
    verifyNow(path, expires, signature, nowSeconds) {
      if (!synchronous) return null;
      const claim = claimOf(expires, signature);
      if (!claim) return false;
      const computed = hmac(message(path, claim.expiresAt)) as Uint8Array;
      return sameBytes(computed, claim.mac) && claim.expiresAt > nowSeconds;
    },
  };
}

/** A random secret for when none is configured (links then last only as long as the process). */
export function randomLinkSecret(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}
