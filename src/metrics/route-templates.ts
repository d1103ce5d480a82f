/**
 * The route template of a request path, for metric labels: `/cms/v1.0/getData/:context/:path`, never
 * the path itself (every resource would be a series of its own). Built from the app's own routes,
 * so a new route is labelled without a list to keep in step. Runtime-free.
 */
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

/** The label of a path no route takes (scanners, typos): one series, whatever the path. */
export const UNMATCHED_ROUTE = "unmatched";
/** Methods kept as they are; any other (clients may send anything) is counted as OTHER. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
/** Paths remembered with their template: the hot ones repeat; the cache is cleared when full. */
const CACHED_PATHS = 4096;

export const methodLabel = (method: string | undefined) => (method && KNOWN_METHODS.has(method) ? method : "OTHER");

/** `:path{.+}` → `:path`: the pattern is the router's business, not the dashboard's. */
const templateOf = (path: string) => path.replace(/\{[^}]*\}/g, "");

/**
 * `routes` as Hono lists them (`app.routes`); middleware (`ALL /*`) is left out. `extra` are paths
 * the server answers before the app (`/metrics`). Returns (method, path without query) → template.
 */
export function createRouteTemplates(
  routes: readonly { method: string; path: string }[],
  extra: readonly string[] = [],
): (method: string, path: string) => string {
  const router = new SmartRouter<string>({ routers: [new RegExpRouter(), new TrieRouter()] });
  const seen = new Set<string>();
  for (const { method, path } of routes) {
    if (method === "ALL" && path.endsWith("*")) continue;
    const key = `${method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    router.add(method, path, templateOf(path));
  }
  for (const path of extra) router.add("ALL", path, path);
  const cache = new Map<string, string>();
  return (method, path) => {
    // HEAD is answered by GET routes, as the app does.
    const key = `${method === "HEAD" ? "GET" : method} ${path}`;
    let template = cache.get(key);
    if (template !== undefined) return template;
    const [matched] = router.match(method === "HEAD" ? "GET" : method, path);
    template = (matched[0]?.[0] as string | undefined) ?? UNMATCHED_ROUTE;
    if (cache.size >= CACHED_PATHS) cache.clear();
    cache.set(key, template);
    return template;
  };
}
