/**
 * Which requests a runtime may answer before the app (runtime/node/fast-get.ts,
 * runtime/bun/fast-get.ts): a GET or HEAD of getData at a plain path, and only when reads are open
 * (`readsAreOpen`, auth/guards.ts: the one statement of that rule), its query at most image
 * parameters (derivative-read.ts decides those) or a `v` (versioned-read.ts). Everything else needs
 * the app: tokens and signed links (its guards read them, and the query), %-escapes (Hono decodes them).
 */
import { API_PREFIX } from "../api-paths.js";
import { parseUri } from "../services/resource-ids.js";

const PREFIX = `${API_PREFIX}/getData/`;

/**
 * The resource named by `target` (a request target: path and query) when a runtime may answer it,
 * with the query (after `?`; undefined: none); else null.
 */
export function runtimeRead(
  readsOpen: boolean,
  method: string | undefined,
  target: string | undefined,
): { context: string; path: string; query: string | undefined } | null {
  if (!readsOpen || (method !== "GET" && method !== "HEAD")) return null;
  if (!target?.startsWith(PREFIX)) return null;
  const at = target.indexOf("?");
  const path = at < 0 ? target : target.slice(0, at);
  if (path.includes("%")) return null;
  const uri = parseUri(path.slice(PREFIX.length));
  // A literal, not `{ ...uri, query }`: the spread's copy took a V8 slow path on every request.
  return uri && { context: uri.context, path: uri.path, query: at < 0 ? undefined : target.slice(at + 1) };
}
