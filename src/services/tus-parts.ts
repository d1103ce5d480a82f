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

export async function removeUpload(uploads: TusUploadStore, blobs: BlobStore, id: string): Promise<void> {
  await uploads.remove(id);
  await dropParts(blobs, id);
}

/** Removes up to `limit` uploads expired at `now` (row, then parts); returns how many. */
export async function collectExpiredUploads(uploads: TusUploadStore, blobs: BlobStore, now: number, limit: number): Promise<number> {
  const rows = await uploads.expired(now, limit);
  for (const row of rows) await removeUpload(uploads, blobs, row.id);
  return rows.length;
}
