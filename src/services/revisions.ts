/**
 * A resource's history: every revision (create, each update, the delete) with the content it had,
 * fetchable by a stable URL for as long as the resource is not deleted.
 */
import type { Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { RevisionRow } from "../metadata/schema.js";
import type { ContentFacts } from "./content.js";
import type { ResourceService } from "./resources.js";

export type RevisionService = ReturnType<typeof createRevisionService>;

export function createRevisionService({ store, resources }: { store: MetadataStore; resources: ResourceService }) {
  return {
    /** Every revision, oldest first; also for a deleted resource, whose last revision records the delete. */
    async list(uid: string, principal: Principal): Promise<RevisionRow[]> {
      const row = await resources.findAnyByUid(uid, principal);
      return store.revisions(row.uid);
    },

    /** What the HTTP layer serves one revision's content from; 404 once the resource is deleted. */
    async content(uid: string, revision: number, principal: Principal): Promise<ContentFacts> {
      const row = await resources.findByUid(uid, principal);
      const found = await store.revision(row.uid, revision);
      if (!found) throw new ProblemError("NOT_FOUND", `resource ${uid} has no revision ${revision}`);
      // A package file's revisions are still that package's files.
      return { ...found, updatedAt: found.createdAt, parentUid: row.parentUid };
    },
  };
}
