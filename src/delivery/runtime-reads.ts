/**
 * Which requests a runtime may answer before the app (runtime/node/fast-get.ts,
 * runtime/bun/fast-get.ts): a GET or HEAD of getData at a plain path. When reads are open
 * (`readsAreOpen`, auth/guards.ts: the one statement of that rule), its query may hold at most image
 * parameters (derivative-read.ts decides those) or a `v` (versioned-read.ts); a signed link's
 * query is read by signed-read.ts, whether reads are open or not. Everything else needs the app:
 * tokens (its guards read them), %-escapes (Hono decodes them).
 */
import { API_PREFIX } from "../api-paths.js";
import type { CacheSettings } from "../http/cache-policy.js";
import type { ImageDerivatives } from "../images/derivatives.js";
import { parseUri } from "../services/resource-ids.js";
import { type DeliveryQuery, fastQuery } from "./query.js";
import { type SignedLinks, signedRead } from "./signed-read.js";

const PREFIX = `${API_PREFIX}/getData/`;

/** A getData request a runtime may answer: the resource's URI, the raw path and the query text. */
export interface RuntimeRead {
  context: string;
  path: string;
  /** The request target's path as sent (what a signed link signs). */
  rawPath: string;
  /** After `?`; undefined: none. */
  query: string | undefined;
}

/** The resource named by `target` (a request target: path and query) when a runtime may answer it; else null. */
export function runtimeRead(method: string | undefined, target: string | undefined): RuntimeRead | null {
  if (method !== "GET" && method !== "HEAD") return null;
  if (!target?.startsWith(PREFIX)) return null;
  const at = target.indexOf("?");
  const rawPath = at < 0 ? target : target.slice(0, at);
  if (rawPath.includes("%")) return null;
  const uri = parseUri(rawPath.slice(PREFIX.length));
  // A literal, not `{ ...uri, query }`: the spread's copy took a V8 slow path on every request.
  return uri && { context: uri.context, path: uri.path, rawPath, query: at < 0 ? undefined : target.slice(at + 1) };
}

/** What a runtime's fast path may answer, besides the row lookup: set once per server. */
export interface FastReads {
  /** `readsAreOpen` (auth/guards.ts): reads need no credentials. Otherwise only signed links are answered. */
  anonymousRead: boolean;
  /** Image derivatives; absent: image parameters are the app's to ignore. */
  images?: ImageDerivatives;
  /** The app's link signer and clock; absent: signed links are the app's. */
  signedLinks?: SignedLinks;
  /** The cache settings a signed link's Cache-Control is made with (the content service's). */
  cache: CacheSettings;
}

/**
 * The parsed query of `uri` when a fast path may answer it: an open read's (query.ts), or a valid
 * signed link's (signed-read.ts); null hands the request to the app (names beside the image
 * parameters, escapes, invalid values, a bad link, a read that needs a token).
 */
export function fastReadQuery(reads: FastReads, uri: RuntimeRead): DeliveryQuery | null {
  const query = reads.anonymousRead ? fastQuery(reads.images, uri.query) : null;
  if (query || !reads.signedLinks || uri.query === undefined) return query;
  return signedRead(reads.signedLinks, reads.cache, uri.rawPath, uri.query);
}
