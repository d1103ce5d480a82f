/** The API version and the path prefix every route lives under (own module: router.ts and meta.ts both need it). */
export const API_VERSION = "1.0";
export const API_PREFIX = `/cms/v${API_VERSION}`;
