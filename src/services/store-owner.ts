/**
 * A blob store (a volume, a bucket + prefix, an R2 bucket) belongs to exactly one deployment: one
 * metadata database, whose id (MetadataStore.deploymentId) the store's owner marker records
 * (BlobStore.claimOwner). Checked once at start-up, before the collector runs: instances of the
 * deployment share the store; any other database is refused, so two deployments pointed at one
 * store by mistake never mix their blobs (and the collector never deletes what its ledger does
 * not record: blob-collector.ts). A store holding blobs but no marker (lost in a copy or restore
 * that skipped dot files, or filled by a release from before the marker) is never adopted by
 * itself: identical files of two deployments share one key, so a database that knows some of its
 * blobs may still be the wrong one, and its purges would delete the owner's content (issue 41).
 * Only CMS_STORE_TAKEOVER naming this deployment's id takes it, logged.
 */
import type { Logger } from "../lib/logger.js";
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

/** The setting by which an operator lets one deployment take a store that holds blobs but no marker. */
export const TAKEOVER_SETTING = "CMS_STORE_TAKEOVER";

/** This deployment may not use the store: another one owns it. The message is one line for the operator. */
export class StoreOwnedElsewhere extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreOwnedElsewhere";
  }
}

/** What start-up found: the deployment's id, the store's marker, and (no marker only) whether it holds content. */
export interface OwnerFacts {
  id: string;
  /** The deployment the marker names; null: no marker. */
  owner: string | null;
  /** Whether the store holds any content blob; asked only when there is no marker. */
  holdsContent: boolean;
  /** CMS_STORE_TAKEOVER, when set. */
  takeover: string | undefined;
  label: StoreLabel;
}

/**
 * What to do with the store: `use` it (the marker names this deployment), `claim` it (no marker,
 * no content: anyone may, create-if-absent), `take` it (no marker, content, and the operator named
 * this deployment), or `refuse` with one line for the operator.
 */
export type OwnerDecision = { action: "use" | "claim" | "take" } | { action: "refuse"; message: string };

/** The decision for `facts`; pure, so every case is a unit test (test/services/store-owner.test.ts). */
export function decideOwner({ id, owner, holdsContent, takeover, label }: OwnerFacts): OwnerDecision {
  if (owner === id) return { action: "use" };
  if (owner !== null) return { action: "refuse", message: ownedElsewhere(label, owner, id) };
  if (!holdsContent) return { action: "claim" };
  if (takeover === id) return { action: "take" };
  const named =
    takeover === undefined ? "" : ` (${TAKEOVER_SETTING}=${takeover} names another deployment, not this one)`;
  return {
    action: "refuse",
    message: `${label.store} holds blobs but no owner marker (lost in a copy or restore, or written by a release from before the marker)${named}: if they are this deployment's, start it once with ${TAKEOVER_SETTING}=${id} (this database's id); otherwise give this deployment its own ${label.setting}`,
  };
}

function ownedElsewhere(label: StoreLabel, owner: string, id: string): string {
  return `${label.store} belongs to another deployment (database ${owner}; this database is ${id}): give each deployment its own ${label.setting}`;
}

/**
 * Claims `blobs` for the deployment of `store` (decideOwner), or throws StoreOwnedElsewhere. A
 * takeover is logged as a warning naming the store and the deployment.
 */
export async function claimBlobStore({
  blobs,
  store,
  label,
  takeover,
  logger,
}: {
  blobs: BlobStore;
  store: MetadataStore;
  label: StoreLabel;
  takeover?: string;
  logger?: Logger;
}): Promise<void> {
  const id = await store.deploymentId();
  const owner = await blobs.owner();
  const decision = decideOwner({
    id,
    owner,
    holdsContent: owner === null && (await holdsContent(blobs)),
    takeover,
    label,
  });
  if (decision.action === "refuse") throw new StoreOwnedElsewhere(decision.message);
  if (decision.action === "use") return;
  // Create-if-absent: of deployments racing for the store, the first marker written wins.
  const claimed = await blobs.claimOwner(id);
  if (claimed !== id) throw new StoreOwnedElsewhere(ownedElsewhere(label, claimed, id));
  if (decision.action === "take") {
    logger?.warn("blob store without an owner marker taken over", {
      store: label.store,
      deployment: id,
      setting: TAKEOVER_SETTING,
    });
  }
}

/** True when the store holds at least one content blob (the first listed chunk answers). */
async function holdsContent(blobs: BlobStore): Promise<boolean> {
  for await (const chunk of contentKeyChunks(blobs)) if (chunk.length > 0) return true;
  return false;
}
