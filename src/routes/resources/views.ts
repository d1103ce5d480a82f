/** Rows → the DTO shapes of the API. */
import type { ResourceRow } from "../../metadata/schema.js";
import { toUri } from "../../services/resource-ids.js";
import { versionedUri } from "../../services/revisions.js";
import { descriptionOf, metadataVersionOf } from "../../services/descriptions.js";
import type { ResourceView } from "./schemas.js";

type ResourceItem = Omit<ResourceView, "resourcesList"> & { resourcesList: null };

/** A raster image's width and height; nothing (absent, not null) for anything else and for rows from before. */
export const dimensionsOf = (row: Pick<ResourceRow, "width" | "height">): { width?: number; height?: number } =>
  row.width !== null && row.height !== null ? { width: row.width, height: row.height } : {};

export const toResourceItem = (row: ResourceRow): ResourceItem => ({
  resourceUID: row.uid,
  author: row.author,
  resourceURI: toUri(row),
  versionedURI: versionedUri(row),
  resourcesList: null,
  mediaType: row.mediaType,
  size: row.size,
  sha256: row.sha256,
  ...dimensionsOf(row),
  createdAt: new Date(row.createdAt).toISOString(),
  ...descriptionOf(row),
  metadataVersion: metadataVersionOf(row),
  ...(row.thumbhash !== null ? { thumbhash: row.thumbhash } : {}),
});

/** A resource with its package files (null when it is not a package). */
export const toResourceView = (row: ResourceRow, files: ResourceRow[] | null = null): ResourceView => ({
  ...toResourceItem(row),
  resourcesList: files && files.map(toResourceItem),
});
