/**
 * A signed link's getData read on a runtime's fast path (runtime/node/fast-get.ts,
 * runtime/bun/fast-get.ts), with auth on or off. It follows the read guard's rules (auth/guards.ts:
 * the MAC over the path and `v`, the expiry) and the route's (routes/content/router.ts: the
 * link's Cache-Control, presets only), applied to the raw request target. Whatever it cannot settle
 * goes to the app, whose guard answers a bad link with 403. A valid link answered here skips Hono's
 * request and the app's middleware: 1.9× the signed GETs per second on Node, 1.8× on Bun
 * (bench/RESULTS.md, thirteenth pass).
 */
import { type LinkSigner, signedTarget } from "../auth/signed-links.js";
import type { ResponseHeaders } from "../http/answer-blob.js";
import { answerCacheHeaders, type CacheSettings } from "../http/cache-policy.js";
import { VERSION_PATTERN } from "../services/revisions.js";
import type { DeliveryQuery } from "./query.js";

/** What a fast path checks signed links with: the app's signer and clock. */
export interface SignedLinks {
  links: LinkSigner;
  clock: () => Date;
}

/**
 * The read `text` (the query after `?`) asks for at `path` (the raw path before it), under the
 * Cache-Control the link's remaining lifetime allows, when it is a valid, unexpired link and nothing
 * else: `expires`, `signature` and at most a `v`, each once. Null hands the request to the app: an
 * image parameter (a link's holder may name presets only, which the route checks), an escape or a
 * dot segment (Hono decodes the one, URL parsing removes the other, so the guard would check another
 * text), a bad or expired link, or a signer that cannot answer in this call.
 */
export function signedRead(
  { links, clock }: SignedLinks,
  cacheSettings: CacheSettings,
  path: string,
  text: string,
): DeliveryQuery | null {
  if (text.includes("%") || text.includes("+") || path.includes("/.")) return null;
  let expires: string | undefined;
  let signature: string | undefined;
  let version: string | undefined;
  for (const pair of text.split("&")) {
    const at = pair.indexOf("=");
    const name = at < 0 ? pair : pair.slice(0, at);
    const value = at < 0 ? "" : pair.slice(at + 1);
    if (name === "expires" && expires === undefined) expires = value;
    else if (name === "signature" && signature === undefined) signature = value;
    else if (name === "v" && version === undefined) version = value;
    else return null;
  }
  if (version !== undefined && !VERSION_PATTERN.test(version)) return null;
  const now = Math.floor(clock().getTime() / 1000);
  if (links.verifyNow(signedTarget(path, version), expires, signature, now) !== true) return null;
  const cache = answerCacheHeaders(cacheSettings, version !== undefined, Number(expires) - now);
  return cache ? sharedRead(version, cache) : null;
}

/** Reads kept, by `v` and Cache-Control; more: all forgotten, made again. */
const SHARED_READS = 256;
const sharedReads = new Map<string, DeliveryQuery>();

/**
 * The read of `version` under `cache`, one frozen object per value: a fast path keeps its form of a
 * head per policy object (Node's flat head array), so links read in the same second share it.
 */
function sharedRead(version: string | undefined, cache: ResponseHeaders): DeliveryQuery {
  const key = `${version ?? ""} ${cache["cache-control"]}`;
  let read = sharedReads.get(key);
  if (!read) {
    if (sharedReads.size >= SHARED_READS) sharedReads.clear();
    read = Object.freeze({ version, image: undefined, cache: Object.freeze(cache) });
    sharedReads.set(key, read);
  }
  return read;
}
