/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `id.timestamp.body` with the key the `whsec_` secret encodes, via Web Crypto (every runtime).
 */
import { decodeBase64 } from "../lib/base64.js";
import { webCryptoHmac } from "../lib/hmac.js";

const PREFIX = "whsec_";

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** A new secret: `whsec_` + base64 of 24 random bytes. */
export const newWebhookSecret = () => PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(24)));

/** The `webhook-*` headers of one attempt; `timestamp` in seconds, fresh on each attempt, `id` never changes. */
export async function signedHeaders(secret: string, id: string, timestamp: number, body: string) {
  const hmac = await webCryptoHmac(decodeBase64(secret.slice(PREFIX.length)));
  const mac = await hmac(new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${toBase64(mac)}`,
  };
}
