/**
 * Which requests a runtime may answer before the app (runtime/node/fast-get.ts,
 * runtime/bun/fast-get.ts): a GET or HEAD of getData at a plain path, and only when reads are open
 * (`readsAreOpen`, auth/guards.ts: the one statement of that rule). Everything else needs the app:
 * tokens and signed links (its guards read them, and the query), %-escapes (Hono decodes them).
 */
import { API_PREFIX } from "../../routes/api-version.js";
import { parseUri } from "../../services/resource-ids.js";

const PREFIX = `${API_PREFIX}/getData/`;

/** The resource named by `path` (a request target: path and query) when a runtime may answer it; else null. */
export function runtimeRead(
  readsOpen: boolean,
  method: string | undefined,
  path: string | undefined,
): { context: string; path: string } | null {
  if (!readsOpen || (method !== "GET" && method !== "HEAD")) return null;
  if (!path?.startsWith(PREFIX) || path.includes("%") || path.includes("?")) return null;
  return parseUri(path.slice(PREFIX.length));
}
