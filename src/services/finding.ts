/**
 * Describing and finding resources (issue 38): updateResourceMetadata (a JSON Merge Patch over the
 * six descriptive fields, no new revision), searchResources and the folder tree. Tenant confinement
 * and roles as listResources (reads) and updateResource (the change).
 */
import { assertTenant, holderOf, type Principal } from "../auth/principal.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { ResourceRow } from "../metadata/schema.js";
import type { FolderEntry, SearchHit, SearchQuery } from "../metadata/search-store.js";
import { ProblemError } from "../problems.js";
import { type DescriptionInput, descriptionColumns, metadataVersionOf, patchedDescription } from "./descriptions.js";
import { lockedBy } from "./locks.js";
import { assertMayModify, type ResourceService } from "./resources.js";

export interface FindingServiceDeps {
  store: MetadataStore;
  resources: ResourceService;
  clock: () => Date;
}

export interface MetadataUpdate {
  uid: string;
  patch: DescriptionInput;
  /** The `If-Match` metadataVersion, when sent. */
  ifMatch?: string;
  /** The caller's lock on the resource, when sent (needed while it is locked). */
  lockId?: string;
  /** Checks the patched description against the limits (400 naming the field); throws if it breaks one. */
  validate(description: DescriptionInput): void;
}

/** Without If-Match, a change racing another is retried on the new state this many times. */
const ATTEMPTS = 3;

export type FindingService = ReturnType<typeof createFindingService>;

export function createFindingService({ store, resources, clock }: FindingServiceDeps) {
  /** 412 when the caller's If-Match names another version than `row`'s. */
  const assertVersion = (row: ResourceRow, ifMatch: string | undefined) => {
    if (ifMatch !== undefined && ifMatch !== metadataVersionOf(row))
      throw new ProblemError(
        "PRECONDITION_FAILED",
        `resource ${row.uid} has metadataVersion ${metadataVersionOf(row)}, not ${ifMatch}; read it again`,
      );
  };

  /** 423 when someone else's live lock is on the resource. */
  async function assertUnlockedFor(uid: string, principal: Principal, lockId: string | undefined, now: number) {
    const held = await store.locks.find(uid, now);
    if (held && !(held.lockId === lockId && held.holder === holderOf(principal)))
      throw lockedBy(
        held,
        `${uid} is locked until ${new Date(held.expiresAt).toISOString()}; only its holder (with its lockID) may change it`,
        now,
      );
  }

  return {
    async updateMetadata(update: MetadataUpdate, principal: Principal): Promise<ResourceRow> {
      for (let attempt = 1; ; attempt++) {
        const row = await resources.findByUid(update.uid, principal);
        assertMayModify(principal, row);
        assertVersion(row, update.ifMatch);
        const now = clock().getTime();
        await assertUnlockedFor(row.uid, principal, update.lockId, now);
        const description = patchedDescription(row, update.patch);
        update.validate(description);
        const changed = await store.search.updateDescription({
          uid: row.uid,
          expectedVersion: row.metadataVersion,
          columns: descriptionColumns(description),
          lock: update.lockId === undefined ? null : { lockId: update.lockId, holder: holderOf(principal) },
          actor: principal.subject,
          now,
        });
        if (changed) return changed;
        // Deleted, locked or changed since the read: the next round's checks say which (404, 423, 412).
        if (attempt >= ATTEMPTS)
          throw new ProblemError("CONFLICT", `resource ${row.uid} was changed concurrently; read it again and retry`);
      }
    },

    async search(query: SearchQuery, principal: Principal): Promise<SearchHit[]> {
      assertTenant(principal, query.tenantId);
      return store.search.search(query);
    },

    async folders(tenantId: string, parent: string, principal: Principal): Promise<FolderEntry[]> {
      assertTenant(principal, tenantId);
      return store.search.folders(tenantId, parent);
    },
  };
}
