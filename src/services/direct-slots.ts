/**
 * Where a direct upload's bytes land before completion (`direct/<id>`, outside every tenant's `t/`
 * area, so the content collector never takes them for content) and how an expired upload goes, row
 * and object. Its own module so the blob collector can expire uploads without the upload service.
 */
import type { DirectUploadStore } from "../metadata/direct-upload-store.js";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";
import { parseBlobKey } from "../storage/keys.js";

export const slotKey = (id: string): BlobKey => parseBlobKey(`direct/${id}`);

/**
 * Removes up to `limit` uploads expired at `now` (row and reservation, then the object: also one a
 * client PUT again after completion); returns how many. Each removal re-checks the expiry.
 */
export async function collectExpiredDirectUploads(
  uploads: DirectUploadStore,
  blobs: BlobStore,
  now: number,
  limit: number,
): Promise<number> {
  let removed = 0;
  for (const row of await uploads.expired(now, limit)) {
    if (!(await uploads.expire(row.id, now))) continue;
    await blobs.delete(slotKey(row.id));
    removed++;
  }
  return removed;
}
