/**
 * The Workers Cache API (`caches.default`, this colo's cache) in front of the app for content that
 * shared caches may keep (issue 28 §4): a public GET of getData or getRevisionData whose answer
 * says `public, max-age=…` (a versioned URL, a revision, or a mutable URL under CMS_CACHE_MAX_AGE).
 * A hit is answered here: no D1 query, no R2 read. Requests with credentials, signed links, image
 * derivatives and anything the policy marks `no-cache` or `private` always reach the app. Ranges and conditional
 * requests are answered by the cache from the stored 200, as Cloudflare's edge does.
 */
import { API_PREFIX, dataPath } from "../../api-paths.js";
import type { CachedContent } from "../../delivery/stale-paths.js";
import type { MetadataStore } from "../../metadata/metadata-store.js";
import { versionOf } from "../../services/revisions.js";

const CONTENT = [`${API_PREFIX}/getData/`, `${API_PREFIX}/getRevisionData/`];

interface EdgeStore {
  match(request: Request): Promise<Response | undefined>;
  put(request: Request, response: Response): Promise<void>;
  delete(request: Request | string): Promise<boolean>;
}

/** This colo's cache, or undefined where there is none (not on Workers). */
const edge = (): EdgeStore | undefined => (globalThis as { caches?: { default?: EdgeStore } }).caches?.default;

/**
 * Whether `request` may be answered from, and stored in, the shared cache: its query at most a `v`.
 * Not signed links, and not image derivatives (`?width=…`): their URLs cannot all be named to evict
 * them on delete or purge (`cachedPaths`), and `format=auto` varies on Accept, which the Cache API
 * does not key by (one client's AVIF would reach the next).
 */
function shareable(request: Request): boolean {
  if (request.method !== "GET" || request.headers.has("authorization")) return false;
  const url = new URL(request.url);
  for (const name of url.searchParams.keys()) if (name !== "v") return false;
  return CONTENT.some((prefix) => url.pathname.startsWith(prefix));
}

/** A whole 200 the origin let shared caches keep for a while. */
const storable = (response: Response) => {
  const policy = response.headers.get("cache-control") ?? "";
  return response.status === 200 && /\bpublic\b/.test(policy) && /\bmax-age=[1-9]/.test(policy);
};

/** The answer from this colo's cache, else from `answer` (stored when the policy allows). */
export async function throughEdgeCache(
  request: Request,
  answer: () => Promise<Response>,
  waitUntil: (work: Promise<unknown>) => void,
): Promise<Response> {
  const cache = edge();
  if (!cache || !shareable(request)) return answer();
  const hit = await cache.match(request);
  if (hit) return hit;
  const response = await answer();
  // Only a whole answer is stored (a range's or a 304 is not the representation).
  const whole = !request.headers.has("range") && !request.headers.has("if-none-match");
  if (whole && storable(response)) waitUntil(cache.put(new Request(request.url), response.clone()));
  return response;
}

const uuidPath = (uid: string) => `${API_PREFIX}/getDataUuid/${encodeURIComponent(uid)}`;

/** Deletes `paths` (on `origin`, from `cachedPaths`, read before a delete or purge) from this colo's cache. */
export async function evictPaths(origin: string, paths: readonly string[]): Promise<void> {
  const cache = edge();
  if (cache) await Promise.all(paths.map((path) => cache.delete(new URL(path, origin).href)));
}

/**
 * What this colo's cache may hold, for the lifecycle routes to name what a change made stale
 * (delivery/stale-paths.ts): after an update, the resource's mutable URLs (its versioned URLs still
 * name the same bytes); before a delete or purge, every URL (`cachedPaths`), but none when shared
 * caches keep nothing (`publicRead` false: reads need credentials). Other colos keep theirs until
 * max-age ends, unless the zone is purged through Cloudflare's purge API (README, Caching).
 */
export function edgeCachedContent(store: FamilyStore, publicRead: boolean): CachedContent {
  return {
    removing: async (uid) => (publicRead ? cachedPaths(store, uid) : []),
    updated: (row) => [dataPath(row), uuidPath(row.uid)],
  };
}

type FamilyStore = Pick<MetadataStore, "findByUid" | "children" | "revisions">;

/**
 * Every URL a cache may hold for resource `uid` and its live package files: the mutable URL, the
 * versioned URL of each content it had (16 hex digits as handed out, and all 64), by UID, and each
 * revision. Read before a delete or purge: a purge takes the rows and revisions with it. Empty
 * without a colo cache (no query then).
 */
export async function cachedPaths(store: FamilyStore, uid: string): Promise<string[]> {
  if (!edge()) return [];
  const row = await store.findByUid(uid);
  if (!row) return [];
  const family = [row, ...(row.parentUid ? [] : await store.children(row.uid))];
  const paths = await Promise.all(
    family.map(async (member) => {
      const revisions = await store.revisions(member.uid);
      const mutable = dataPath(member);
      const contents = new Set([member.sha256, ...revisions.map((r) => r.sha256)]);
      return [
        mutable,
        uuidPath(member.uid),
        ...[...contents].flatMap((sha256) => [`${mutable}?v=${versionOf(sha256)}`, `${mutable}?v=${sha256}`]),
        ...revisions.map((r) => `${API_PREFIX}/getRevisionData/${encodeURIComponent(member.uid)}/${r.revision}`),
      ];
    }),
  );
  return paths.flat();
}
