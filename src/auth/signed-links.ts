/**
 * Signed, expiring getData links: an HMAC-SHA256 (Web Crypto) over the exact path and expiry, so a
 * browser can fetch one resource without a token, only until the link expires.
 */

const encoder = new TextEncoder();

const toBase64Url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return null; // a SHA-256 MAC is exactly 43 chars unpadded
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

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
}

export async function createLinkSigner(secret: string): Promise<LinkSigner> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
  return {
    async sign(path, expires) {
      const mac = await crypto.subtle.sign("HMAC", key, message(path, expires));
      return `expires=${expires}&signature=${toBase64Url(mac)}`;
    },
    async verify(path, expires, signature, nowSeconds) {
      if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return false;
      const mac = fromBase64Url(signature);
      if (!mac) return false;
      const valid = await crypto.subtle.verify("HMAC", key, mac, message(path, Number(expires)));
      return valid && Number(expires) > nowSeconds;
    },
  };
}

/** A random secret for when none is configured (links then last only as long as the process). */
export function randomLinkSecret(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)).buffer);
}
