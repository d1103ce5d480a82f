/**
 * The Workers Cache API (`caches.default`, this colo's cache) in front of the app for content that
 * shared caches may keep (issue 28 §4): a public GET of getData or getRevisionData whose answer
 * says `public, max-age=…` (a versioned URL, a revision, or a mutable URL under CMS_CACHE_MAX_AGE).
 * A hit is answered here: no D1 query, no R2 read. Requests with credentials, signed links and
 * anything the policy marks `no-cache` or `private` always reach the app. Ranges and conditional
 * requests are answered by the cache from the stored 200, as Cloudflare's edge does.
 */
import { API_PREFIX } from "../../routes/api-version.js";

const CONTENT = [`${API_PREFIX}/getData/`, `${API_PREFIX}/getRevisionData/`];

interface EdgeStore {
  match(request: Request): Promise<Response | undefined>;
  put(request: Request, response: Response): Promise<void>;
  delete(request: Request | string): Promise<boolean>;
}

/** This colo's cache, or undefined where there is none (not on Workers). */
const edge = (): EdgeStore | undefined => (globalThis as { caches?: { default?: EdgeStore } }).caches?.default;

/** Whether `request` may be answered from, and stored in, the shared cache. */
function shareable(request: Request): boolean {
  if (request.method !== "GET" || request.headers.has("authorization")) return false;
  const url = new URL(request.url);
  if (url.searchParams.has("signature") || url.searchParams.has("expires")) return false;
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

/**
 * Evicts this colo's copies of a resource's mutable URL after an update, delete or purge answered
 * with it (`resourceURI`, `resourceUID`). Other colos keep theirs until max-age ends, unless the
 * zone is purged through Cloudflare's purge API (README, Caching).
 */
export async function evictFromEdge(origin: string, body: { resourceURI?: string; resourceUID?: string }) {
  const cache = edge();
  if (!cache) return;
  const paths: string[] = [];
  if (body.resourceURI)
    paths.push(`${API_PREFIX}/getData/${body.resourceURI.split("/").map(encodeURIComponent).join("/")}`);
  if (body.resourceUID) paths.push(`${API_PREFIX}/getDataUuid/${encodeURIComponent(body.resourceUID)}`);
  await Promise.all(paths.map((path) => cache.delete(new URL(path, origin).href)));
}
