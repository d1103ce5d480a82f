/**
 * The API version, the path prefix every route lives under, and getData's path of a resource: names
 * the routes, the delivery core and the runtimes share, in a module of their own below them all.
 */
export const API_VERSION = "1.0";
export const API_PREFIX = `/cms/v${API_VERSION}`;

/** getData's path of a resource: each path segment percent-encoded, so package files keep their `/` and relative links resolve. */
export const dataPath = (row: { context: string; path: string }) =>
  `${API_PREFIX}/getData/${row.context}/${row.path.split("/").map(encodeURIComponent).join("/")}`;
