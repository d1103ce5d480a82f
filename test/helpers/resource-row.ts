import type { NewResourceRow } from "../../src/metadata/schema.js";

/** A resource row for tests that write the metadata store directly: tenant `t`, `a.txt`, overridable. */
export const resourceRow = (uid: string, over: Partial<NewResourceRow> = {}): NewResourceRow => ({
  uid,
  shortId: uid.split("-")[0] as string,
  tenantId: "t",
  context: uid,
  path: "a.txt",
  name: "a.txt",
  author: "A",
  mediaType: "text/plain",
  size: 1,
  sha256: "s",
  blobKey: `k-${uid}`,
  createdAt: 1000,
  updatedAt: 1000,
  ...over,
});
