/** The blob store CMS_STORAGE chooses (fs volume or S3), checked usable, with the small-blob memory cache in front. */
import type { Config } from "../../config.js";
import type { StoreLabel } from "../../services/store-owner.js";
import type { BlobStore } from "../../storage/blob-store.js";
import { createCachedBlobStore } from "../../storage/drivers/cached.js";
import { createFsBlobStore } from "../../storage/drivers/fs.js";
import { createS3BlobStore } from "../../storage/drivers/s3.js";

/** How start-up names the store CMS_STORAGE chooses when another deployment owns it (services/store-owner.ts). */
export function storeLabelOf(config: Config): StoreLabel {
  if (config.CMS_STORAGE !== "s3")
    return { store: `the volume CMS_VOLUME=${config.CMS_VOLUME}`, setting: "CMS_VOLUME" };
  return {
    store: `the bucket CMS_S3_BUCKET=${config.CMS_S3_BUCKET} with CMS_S3_PREFIX=${JSON.stringify(config.CMS_S3_PREFIX ?? "")}`,
    setting: "CMS_S3_PREFIX",
  };
}

/** The store, and `close` for a graceful stop (the fs volume's own temp folder goes; S3 holds nothing). */
export async function openBlobStorage(config: Config): Promise<{ blobs: BlobStore; close(): Promise<void> }> {
  const fs =
    config.CMS_STORAGE === "s3"
      ? null
      : await createFsBlobStore({ root: config.CMS_VOLUME, syncReadBytes: config.CMS_FS_SYNC_READ_BYTES });
  const storage =
    fs ??
    createS3BlobStore({
      endpoint: config.CMS_S3_ENDPOINT as string,
      bucket: config.CMS_S3_BUCKET as string,
      region: config.CMS_S3_REGION,
      accessKeyId: config.CMS_S3_ACCESS_KEY_ID as string,
      secretAccessKey: config.CMS_S3_SECRET_ACCESS_KEY as string,
      prefix: config.CMS_S3_PREFIX,
    });
  await storage.check();
  // Content-addressed blobs never change, so hot small ones can be served from memory.
  const blobs =
    config.CMS_BLOB_CACHE_BYTES > 0
      ? createCachedBlobStore(storage, {
          maxBytes: config.CMS_BLOB_CACHE_BYTES,
          maxEntryBytes: config.CMS_BLOB_CACHE_ENTRY_BYTES,
        })
      : storage;
  return { blobs, close: async () => fs?.close() };
}
