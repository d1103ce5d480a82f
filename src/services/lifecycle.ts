/**
 * Changing and removing resources: updateResource (new content and/or author, name, media type as a
 * new revision; UID and URI stay), deleteResource (soft, with a revision record) and the admin purge
 * (rows, revisions and locks gone for good, then every blob nothing references any more).
 */
import { assertTenant, type Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import { sniffMediaType } from "../lib/media-sniff.js";
import type { GuardedChange, ResourceChanges, MetadataStore } from "../metadata/metadata-store.js";
import type { LockRow, ResourceRow } from "../metadata/schema.js";
import type { ContentService, StoredBlob } from "./content.js";
import { type LockClaim, lockProblem, proofOf } from "./locks.js";
import type { ContentSource } from "./content-source.js";
import type { QuotaService } from "./quotas.js";
import type { Placeholder } from "../images/thumbhash.js";
import { assertMayModify, type RequestContext, type ResourceService } from "./resources.js";

export interface LifecycleServiceDeps {
  store: MetadataStore;
  content: ContentService;
  resources: ResourceService;
  clock: () => Date;
  quotas: QuotaService;
  /** New content's thumbhash (images/thumbhash.ts), as at creation. */
  placeholder?: Placeholder;
}

export interface ResourceUpdate {
  author?: string;
  name?: string;
  mediaType?: string;
  /** New content; absent to change only the metadata. */
  source?: ContentSource;
}

export type LifecycleService = ReturnType<typeof createLifecycleService>;

export function createLifecycleService({
  store,
  content,
  resources,
  clock,
  quotas,
  placeholder,
}: LifecycleServiceDeps) {
  /** The resource the caller may modify and its live lock, checked before any content is fetched. */
  async function prepare(claim: LockClaim, principal: Principal) {
    const row = await resources.findByUid(claim.name, principal);
    assertMayModify(principal, row);
    const now = clock().getTime();
    const lock = await store.locks.find(claim.name, now);
    const change: GuardedChange = {
      uid: row.uid,
      expectedRevision: row.revision,
      lock: proofOf(claim, principal),
      actor: principal.subject,
      now,
    };
    if (lock && lock.lockId === claim.lockId && lock.holder === change.lock.holder && lock.owner !== claim.owner) {
      // The caller's own lock under another owner name: a typo in a field, not someone else's lock.
      const field = claim.ownerField ?? "author";
      const detail = `must be "${lock.owner}", the owner given when locking`;
      throw new ProblemError("VALIDATION_FAILED", `${field} ${detail}`, {
        errors: [{ pointer: `/json/${field}`, detail }],
      });
    }
    if (!lock || lock.lockId !== claim.lockId || lock.owner !== claim.owner || lock.holder !== change.lock.holder) {
      throw await lockProblem(store, claim.name, change.lock, now);
    }
    return { row, lock, change };
  }

  /** Explains a guarded statement that changed nothing: deleted, lock lost, or a concurrent change. */
  async function refused(change: GuardedChange): Promise<ProblemError> {
    const current = await store.findByUid(change.uid);
    if (!current || current.deletedAt !== null)
      return new ProblemError("NOT_FOUND", `resource ${change.uid} was deleted`);
    return lockProblem(store, change.uid, change.lock, change.now);
  }

  /** Refuses replacing a package's content (re-exploding would replace every file's UID). */
  async function assertNotPackage(row: ResourceRow) {
    if ((await store.children(row.uid)).length > 0) {
      throw new ProblemError(
        "CONFLICT",
        `resource ${row.uid} is a package; create a new package instead of replacing its content`,
      );
    }
  }

  return {
    /**
     * What `update` with new content checks before any byte arrives: the resource the caller may
     * modify under its live lock, and not a package (a resumable new version checks it up front).
     */
    async contentTarget(claim: LockClaim, principal: Principal): Promise<ResourceRow> {
      const { row } = await prepare(claim, principal);
      await assertNotPackage(row);
      return row;
    },

    /**
     * Needs the caller's live lock, which stays held. The previous content stays reachable as a
     * revision. If anything fails the resource is unchanged and newly stored content is discarded.
     */
    async update(
      claim: LockClaim,
      update: ResourceUpdate,
      ctx: RequestContext,
    ): Promise<{ row: ResourceRow; lock: LockRow }> {
      const { row, lock, change } = await prepare(claim, ctx.principal);
      if (update.name?.includes("/") && update.name !== row.name) {
        const detail = "must be a file name; a package file's path can only be echoed unchanged";
        throw new ProblemError("VALIDATION_FAILED", `resourceName ${detail}`, {
          errors: [{ pointer: "/json/resourceName", detail }],
        });
      }
      if (update.source) await assertNotPackage(row);
      const stored: StoredBlob[] = [];
      try {
        const changes: ResourceChanges = { author: update.author, name: update.name, mediaType: update.mediaType };
        if (update.source) {
          const { body, externalUri, pointer } = await resources.open(update.source, ctx.signal);
          // New bytes without a named type: detect it from them (kept unchanged when undetectable).
          const sniffed = update.mediaType === undefined ? sniffMediaType(body) : undefined;
          const blob = await content.put(row.tenantId, sniffed?.body ?? body, pointer);
          stored.push(blob);
          const { size, sha256, width, height } = blob;
          const thumbhash = (await placeholder?.(blob)) ?? null;
          Object.assign(changes, { size, sha256, blobKey: blob.key, width, height, thumbhash, externalUri });
          if (sniffed) changes.mediaType = await sniffed.mediaType();
        }
        // The lock was live when checked, but only the guarded statement decides (it may expire during a download).
        // New content adds all its bytes to the tenant's stored bytes (the old content stays, as a
        // revision, until purge) unless the resource already keeps it (the store decides), and to ingress.
        const charge =
          changes.size === undefined
            ? undefined
            : { ...quotas.charge(row.tenantId, changes.size, changes.size), resources: 0 };
        let updated: ResourceRow | null;
        try {
          // A resumable new version: its upload is recorded finished in the update's own batch.
          const upload = ctx.tusUploadId ? { uploadId: ctx.tusUploadId, resourceUid: row.uid } : undefined;
          updated = await store.update({ ...change, now: clock().getTime() }, changes, charge, upload);
        } catch (err) {
          throw (charge && (await quotas.refusal(err, charge))) || err;
        }
        if (!updated) throw await refused({ ...change, now: clock().getTime() });
        return { row: updated, lock };
      } catch (err) {
        await content.discard(stored);
        throw content.insertFailure(err);
      }
    },

    /** Soft delete: never served again, its package files with it; the lock is released. */
    async remove(claim: LockClaim, principal: Principal): Promise<ResourceRow> {
      const { change } = await prepare(claim, principal);
      const deleted = await store.softDelete(change);
      if (!deleted) throw await refused(change);
      return deleted;
    },

    /** Admin only (the route's guard): removes a resource, deleted or not, with its files, for good. */
    async purge(uid: string, principal: Principal): Promise<{ uids: string[]; blobsRemoved: number }> {
      const row = await resources.findAnyByUid(uid, principal);
      assertTenant(principal, row.tenantId);
      const purged = await store.purge(row.uid, clock().getTime());
      if (!purged) throw new ProblemError("NOT_FOUND", `resource ${uid} not found`);
      return { uids: purged.uids, blobsRemoved: await content.collect(purged.blobKeys) };
    },
  };
}
