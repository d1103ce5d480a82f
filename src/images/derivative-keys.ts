/**
 * Where image derivatives lie in the blob store: under `img/`, outside the content's `t/` that the
 * collector sweeps and the quotas count, one folder per source blob (tenant hash + SHA-256), so the
 * tenant's derivatives of a blob go with it on purge and no tenant ever shares another's.
 */

/** `t/<tenant>/<ab>/<cd>/<sha>` → `img/<tenant>/<sha>/`; null for a key that is no content key. */
export function derivativePrefix(blobKey: string): string | null {
  const parts = blobKey.split("/");
  if (parts.length !== 5 || parts[0] !== "t") return null;
  return `img/${parts[1]}/${parts[4]}/`;
}
