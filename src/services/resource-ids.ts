/**
 * Resource identifiers: the UID `<shortId>-<tenantId>` and the URI `<context>/<path>`, where the
 * context is the resource's own UID or, for a file of a zip package, the package's UID.
 */
import { SHORT_ID_PATTERN } from "../lib/ids.js";

export const toUid = (shortId: string, tenantId: string) => `${shortId}-${tenantId}`;

/** Splits `<shortId>-<tenantId>`; null when the text cannot be a UID (so the caller answers 404). */
export function parseUid(uid: string): { shortId: string; tenantId: string } | null {
  const dash = uid.indexOf("-");
  if (dash < 0) return null;
  const shortId = uid.slice(0, dash);
  const tenantId = uid.slice(dash + 1);
  return SHORT_ID_PATTERN.test(shortId) && tenantId.length > 0 ? { shortId, tenantId } : null;
}

/** `<context>/<path>` → { context, path }; the path may contain further `/` (package files). */
export function parseUri(uri: string): { context: string; path: string } | null {
  const slash = uri.indexOf("/");
  if (slash <= 0 || slash === uri.length - 1) return null;
  return { context: uri.slice(0, slash), path: uri.slice(slash + 1) };
}

export const toUri = (row: { context: string; path: string }) => `${row.context}/${row.path}`;
