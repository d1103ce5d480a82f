/**
 * Cache-Control for content answers (issue 28's table), decided in one place for the route, the
 * runtimes' fast paths and the Worker's edge cache. Content is content-addressed, so a URL that
 * names the bytes (a versioned URL, a revision) never changes and may be kept for a year; a mutable
 * URL is revalidated with its ETag unless the operator accepts N seconds of staleness. Shared
 * caches only ever get `public` answers, and only when reads need no credentials.
 */

/** One year: the customary ceiling for `immutable` (RFC 8246). */
export const IMMUTABLE_SECONDS = 31_536_000;

/**
 * What a content answer varies on besides its URL. A 200 carries Content-Digest only when asked
 * (Want-Content-Digest). CORS answers `*` to every origin, so Origin is not listed: it would be
 * named only where the allowed origin is echoed.
 */
export const CONTENT_VARY = "Want-Content-Digest";

export interface CacheSettings {
  /** Reads need no credentials (auth off, or CMS_PUBLIC_READ): shared caches may keep answers. */
  publicRead: boolean;
  /** CMS_CACHE_MAX_AGE: seconds a public mutable URL stays fresh (0: revalidate each time). */
  maxAge: number;
  /** CMS_CACHE_STALE_WHILE_REVALIDATE: seconds a cache may serve it stale while it refetches. */
  staleWhileRevalidate: number;
}

/** What the URL names: fixed bytes, whatever the resource holds now, or a signed link with `seconds` left. */
export type CacheTarget = { kind: "immutable" } | { kind: "mutable" } | { kind: "signed"; seconds: number };

export function cacheControl(settings: CacheSettings, target: CacheTarget): string {
  const scope = settings.publicRead ? "public" : "private";
  if (target.kind === "immutable") return `${scope}, max-age=${IMMUTABLE_SECONDS}, immutable`;
  if (target.kind === "signed") {
    // The link, not the bytes, expires: no cache may answer it after that, and a shared one never.
    const left = Math.min(Math.max(0, Math.floor(target.seconds)), IMMUTABLE_SECONDS);
    return `private, max-age=${left}`;
  }
  if (!settings.publicRead || settings.maxAge <= 0) return `${scope}, no-cache`;
  const stale = settings.staleWhileRevalidate > 0 ? `, stale-while-revalidate=${settings.staleWhileRevalidate}` : "";
  return `public, max-age=${settings.maxAge}${stale}`;
}

/**
 * The Cache-Control a content route sets over the entity's (mutable) one, or undefined to keep it:
 * a signed link's lifetime bounds any answer; otherwise a URL naming fixed bytes is immutable.
 */
export function answerCacheHeaders(
  settings: CacheSettings,
  immutable: boolean,
  signedLinkSeconds: number | undefined,
): Record<string, string> | undefined {
  if (signedLinkSeconds !== undefined)
    return { "cache-control": cacheControl(settings, { kind: "signed", seconds: signedLinkSeconds }) };
  return immutable ? { "cache-control": cacheControl(settings, { kind: "immutable" }) } : undefined;
}
