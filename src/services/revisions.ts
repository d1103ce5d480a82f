/**
 * A resource's history: every revision (create, each update, the delete) with the content it had,
 * fetchable by a stable URL for as long as the resource is not deleted.
 */
import type { Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { ResourceRow, RevisionRow } from "../metadata/schema.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import { toUri } from "./resource-ids.js";
import type { ResourceService } from "./resources.js";

/** Hex digits of the SHA-256 in a handed-out versioned URI: 64 bits, no collision among one resource's revisions. */
export const VERSION_DIGITS = 16;

/** A `v` a versioned URL may carry: the content's SHA-256, whole or a prefix of at least 16 hex digits. */
export const VERSION_PATTERN = /^[0-9a-fA-F]{16,64}$/;

/** The version tag of content with this SHA-256. */
export const versionOf = (sha256: string) => sha256.slice(0, VERSION_DIGITS);

/** `<resourceURI>?v=<16 hex>`: the URI that names this row's content for good (issue 28). */
export const versionedUri = (row: Pick<ResourceRow, "context" | "path" | "sha256">) =>
  `${toUri(row)}?v=${versionOf(row.sha256)}`;

/** A resourceURI, or a versionedURI split into the resourceURI and its `v` (undefined when it names none). */
export function splitVersion(uri: string): { uri: string; version?: string } {
  const at = uri.lastIndexOf("?v=");
  const version = at < 0 ? "" : uri.slice(at + 3);
  return VERSION_PATTERN.test(version) ? { uri: uri.slice(0, at), version: version.toLowerCase() } : { uri };
}

/** Per live row, its current content as a versioned answer's facts (one object: its answer head is built once). */
const currentFacts = new WeakMap<ResourceRow, ContentFacts>();

/**
 * `row`'s current content as facts without the URI (a versioned answer links nowhere further);
 * the same object for the same row object, which is never changed in place.
 */
export function currentContentFacts(row: ResourceRow): ContentFacts {
  let facts = currentFacts.get(row);
  if (!facts) {
    const { blobKey, size, sha256, mediaType, name, updatedAt, parentUid } = row;
    facts = { blobKey, size, sha256, mediaType, name, updatedAt, parentUid };
    currentFacts.set(row, facts);
  }
  return facts;
}

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

    /**
     * The content `version` (a VERSION_PATTERN, checked by the caller) names for the live `row`: its
     * current content, or an earlier revision's. 404 VERSION_NOT_FOUND when no revision had it.
     */
    async byVersion(row: ResourceRow, version: string): Promise<ContentFacts> {
      const prefix = version.toLowerCase();
      if (row.sha256.startsWith(prefix)) return currentContentFacts(row);
      const found = await store.revisionBySha256Prefix(row.uid, prefix);
      if (!found) throw new ProblemError("VERSION_NOT_FOUND", `no revision of ${toUri(row)} has the content ${prefix}`);
      return { ...found, updatedAt: found.createdAt, parentUid: row.parentUid };
    },
  };
}
