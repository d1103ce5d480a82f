/**
 * Where a tus upload's parts live (blob-store objects under `tus/<id>/`) and how an upload is
 * removed, row and parts. Its own module so the blob collector can expire uploads without
 * depending on the upload service (and, through it, on resources).
 */
import type { TusUploadStore } from "../metadata/tus-store.js";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";

export const partsPrefix = (id: string) => `tus/${id}/`;

/** Deletes every object under the upload's prefix (recorded parts and any orphan of a failed PATCH). */
export async function dropParts(blobs: BlobStore, id: string): Promise<void> {
  const keys: BlobKey[] = [];
  for await (const key of blobs.list(partsPrefix(id))) keys.push(key);
  await Promise.all(keys.map((key) => blobs.delete(key)));
}

/**
 * Removes up to `limit` uploads expired at `now` (row and reservation, then parts); returns how
 * many. Each removal re-checks the expiry in its own statement: an upload a PATCH renewed, or a
 * request claimed for finishing, since it was listed stays.
 */
export async function collectExpiredUploads(
  uploads: TusUploadStore,
  blobs: BlobStore,
  now: number,
  limit: number,
): Promise<number> {
  const rows = await uploads.expired(now, limit);
  let removed = 0;
  for (const row of rows) {
    if (!(await uploads.expire(row.id, now))) continue;
    await dropParts(blobs, row.id);
    removed++;
  }
  return removed;
}
