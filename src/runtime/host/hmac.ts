/**
 * The link signer's HMAC on Node and Bun: node:crypto's, synchronous. Web Crypto's (the default,
 * auth/signed-links.ts) hands each MAC to a thread pool, which on a signed GET cost more CPU than
 * the rest of the request's work in the app.
 */
import { createHmac, createSecretKey } from "node:crypto";
import type { HmacOf } from "../../lib/hmac.js";

export const nodeHmac: HmacOf = (secret) => {
  const key = createSecretKey(secret);
  return (data) => createHmac("sha256", key).update(data).digest();
};
