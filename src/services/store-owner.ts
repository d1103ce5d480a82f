/**
 * A blob store (a volume, a bucket + prefix, an R2 bucket) belongs to exactly one deployment: one
 * metadata database, whose id (MetadataStore.deploymentId) the store's owner marker records
 * (BlobStore.claimOwner). Checked once at start-up, before the collector runs: instances of the
 * deployment share the store; any other database is refused, so two deployments pointed at one
 * store by mistake never mix their blobs (and the collector never deletes what its ledger does
 * not record: blob-collector.ts).
 */
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { BlobStore } from "../storage/blob-store.js";
import { contentKeyChunks } from "./blob-collector.js";

/** How the runtime names its store to an operator, and the setting that gives a deployment its own. */
export interface StoreLabel {
  /** e.g. `the volume CMS_VOLUME=/srv/cms`, `the bucket CMS_S3_BUCKET=cms with CMS_S3_PREFIX=""` */
  store: string;
  /** e.g. `CMS_VOLUME`, `CMS_S3_PREFIX` */
  setting: string;
}

/** This deployment may not use the store: another one owns it. The message is one line for the operator. */
export class StoreOwnedElsewhere extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreOwnedElsewhere";
  }
}

/**
 * Claims `blobs` for the deployment of `store`, or throws StoreOwnedElsewhere. A store without a
 * marker (a new one, or one an older release filled) is claimed if it holds no content blob or this
 * database recorded at least one of them; holding only blobs this database never recorded, it is
 * someone else's (left unclaimed, for its own deployment to claim when it is upgraded).
 */
export async function claimBlobStore({
  blobs,
  store,
  label,
}: {
  blobs: BlobStore;
  store: MetadataStore;
  label: StoreLabel;
}): Promise<void> {
  const id = await store.deploymentId();
  let owner = await blobs.owner();
  if (owner === null) {
    if (!(await mayClaimUnmarked(blobs, store))) {
      throw new StoreOwnedElsewhere(
        `${label.store} holds blobs this deployment's database has no record of, and no owner marker (another deployment's, from an older release?): give this deployment its own ${label.setting}, or see the README's upgrade notes`,
      );
    }
    owner = await blobs.claimOwner(id);
  }
  if (owner !== id) {
    throw new StoreOwnedElsewhere(
      `${label.store} belongs to another deployment (database ${owner}; this database is ${id}): give each deployment its own ${label.setting}`,
    );
  }
}

/** True when the store holds no content blob, or this database recorded at least one of those it holds. */
async function mayClaimUnmarked(blobs: BlobStore, store: MetadataStore): Promise<boolean> {
  let empty = true;
  for await (const chunk of contentKeyChunks(blobs)) {
    empty = false;
    if ((await store.ledger.unknown(chunk)).length < chunk.length) return true;
  }
  return empty;
}
