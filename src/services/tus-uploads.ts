/**
 * Resumable uploads (tus 1.0): an upload is a database row plus the parts received so far, each a
 * blob-store object under `tus/<id>/` (so every driver — fs, S3, R2, memory — holds them with no
 * driver of its own, and they survive restarts). When the last byte arrives the parts are streamed,
 * in order, into `resources.create`: a finished upload is an ordinary resource (dedupe, zip packages,
 * digests, tenant rules). Expired uploads are collected a few at a time when new ones are created,
 * and all of them by every blob-collector pass (blob-collector.ts), so they go with nobody uploading.
 *
 * Exactly once: the request that finishes an upload first claims it in one statement; any other
 * finisher, a termination or an expiry then leaves it alone (409, or 404 once it is gone), and the
 * resource's batch records it finished. An unfinished upload holds its Upload-Length in its
 * tenant's bytes (tus-store.ts), so parts waiting to be finished cannot get past the bytes quota.
 */
import { assertCan, assertTenant, holderOf, type Ownership, ownershipOf, type Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import { ZipError } from "../zip/errors.js";
import { Sha256, toHex } from "../lib/sha256.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { ResourceRow, TusUploadRow } from "../metadata/schema.js";
import { partsOf, type TusPart } from "../metadata/tus-store.js";
import { type BlobKey, type BlobStore, StorageError } from "../storage/blob-store.js";
import { parseBlobKey } from "../storage/keys.js";
import type { ExpectedDigest } from "./content-source.js";
import type { LifecycleService } from "./lifecycle.js";
import type { LockClaim } from "./locks.js";
import type { QuotaService } from "./quotas.js";
import type { Created, NewResource, ResourceService } from "./resources.js";
import { collectExpiredUploads, dropParts, partsPrefix } from "./tus-parts.js";

export interface TusUploadDeps {
  store: MetadataStore;
  blobs: BlobStore;
  resources: ResourceService;
  /** Finishes a new version (updateResource's rules: the caller's live lock, no package). */
  lifecycle: LifecycleService;
  quotas: QuotaService;
  clock: () => Date;
  maxBytes: number;
  expiryMs: number;
  /** Most unfinished uploads per tenant (0 = none). */
  maxPending: number;
}

/** `filetype`: the type the uploader's library sent (tus-js-client's, Uppy's key), checked against the bytes. */
export type TusFields = NewResource & { expectedSha256?: string; filetype?: string };

/**
 * A new version of an existing resource (issue 40 §1: any size, resumable like a new upload): the
 * lock proof updateResource takes (`resourceUID`, `lockID`, and `author`, the lock's owner), and
 * optionally a declared media type (else the bytes' type, else unchanged, as updateResource).
 */
export interface TusNewVersion {
  resourceUID: string;
  lockID: string;
  author: string;
  resourceMediaType?: string;
}

/** What an upload becomes: a new resource, or a new version of one. */
export type TusTarget = TusFields | { newVersion: TusNewVersion };

const claimOf = (v: TusNewVersion): LockClaim => ({ name: v.resourceUID, lockId: v.lockID, owner: v.author });
const targetOf = (row: TusUploadRow) => JSON.parse(row.fields) as TusTarget;

export type TusUploadService = ReturnType<typeof createTusUploadService>;

/** Where problems with a finished upload's content point: its metadata header. */
export const METADATA_POINTER = "/header/upload-metadata";
/** How an unknown, expired or terminated upload answers (HEAD, PATCH, DELETE alike; tus allows 404 for all). */
const notFound = (id: string) => new ProblemError("NOT_FOUND", `upload ${id} not found or expired`);
/** Expired uploads removed per creation: bounded, so one request never pays for a long backlog. */
const COLLECT_PER_CREATE = 8;

const randomId = () => toHex(crypto.getRandomValues(new Uint8Array(16)));

/**
 * The request body as received, ended cleanly where the client stopped: tus keeps whatever arrived
 * before a connection dropped, so the client resumes from there. With a checksum every byte must
 * arrive, so then an interrupted body stays an error and nothing of it is kept.
 */
function keepWhatArrived(body: ReadableStream<Uint8Array>, hasher: Sha256 | undefined): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (err) {
          if (hasher) throw err;
          controller.close();
          return;
        }
        if (result.done) return controller.close();
        hasher?.update(result.value);
        controller.enqueue(result.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** The parts, one after the other, read lazily (one part open at a time). */
function concatenated(blobs: BlobStore, parts: TusPart[]): ReadableStream<Uint8Array> {
  let next = 0;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (!reader) {
            const part = parts[next++];
            if (!part) return controller.close();
            const blob = await blobs.get(part.key as BlobKey);
            if (!blob || blob.size !== part.size) throw new Error(`tus part ${part.key} is missing or changed`);
            reader = blob.body.getReader();
          }
          const { done, value } = await reader.read();
          if (done) {
            reader = undefined;
            continue;
          }
          controller.enqueue(value);
          return;
        }
      },
      cancel: (reason) => reader?.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

export function createTusUploadService(deps: TusUploadDeps) {
  const { store, blobs, resources, clock } = deps;
  const uploads = store.tusUploads;
  const now = () => clock().getTime();

  const live = (row: TusUploadRow | null): row is TusUploadRow => row !== null && row.expiresAt > now();

  /**
   * Why `id` could not be changed as asked: gone (404, as its HEAD answers), or in another state
   * than the caller saw (409: another request is finishing it, or it is finished).
   */
  async function refusal(id: string, conflict: () => ProblemError): Promise<ProblemError> {
    const row = await uploads.find(id);
    if (!live(row)) return notFound(id);
    if (row.state === "finishing")
      return new ProblemError("CONFLICT", "the upload is being finished by another request; HEAD it for the outcome");
    if (row.state === "finished")
      return new ProblemError("CONFLICT", "the upload is complete and became a resource; its HEAD names it");
    return conflict();
  }

  /** The resource a finished upload became, while it exists (a finished upload's HEAD names it). */
  async function outcome(row: TusUploadRow): Promise<ResourceRow | null> {
    const resource = row.resourceUid ? await store.findByUid(row.resourceUid) : null;
    return resource && resource.deletedAt === null ? resource : null;
  }

  /** The upload `id` if `principal` may act on it: 404 when unknown or expired (tus allows 404 for both). */
  async function get(id: string, principal: Principal): Promise<TusUploadRow> {
    const row = /^[0-9a-f]{32}$/.test(id) ? await uploads.find(id) : null;
    if (!live(row)) throw notFound(id);
    assertTenant(principal, row.tenantId);
    // Only its creator (or an admin) continues an upload; with auth off, the unguessable URL is the key.
    if (principal.subject !== null) {
      assertCan(principal, "modify", row);
      // A new version is finished under its creator's lock, which no one else holds: an admin's
      // last PATCH would be refused and end it.
      const creator = row.owner === null ? null : JSON.stringify([row.ownerIssuer, row.owner]);
      if ("newVersion" in targetOf(row) && holderOf(principal) !== creator) {
        throw new ProblemError("FORBIDDEN", "a new version's upload is continued by the holder of its lock only");
      }
    }
    return row;
  }

  /**
   * After a claimed upload failed to finish: a refusal (a 4xx problem, or a bad package: a ZipError
   * is always the content's fault) ends it, as resending the same bytes could not help; anything
   * else gives the claim back, so an empty PATCH at its end tries again. Returns `err`.
   */
  async function giveUp(row: TusUploadRow, err: unknown): Promise<unknown> {
    if ((err instanceof ProblemError && err.status < 500) || err instanceof ZipError) {
      await uploads.abandon(row.id);
      await dropParts(blobs, row.id);
    } else {
      await uploads.unclaim(row.id);
    }
    return err;
  }

  /** A claimed new version's bytes become the resource's content under updateResource's rules. */
  async function finishNewVersion(row: TusUploadRow, version: TusNewVersion, principal: Principal): Promise<Created> {
    const body = concatenated(blobs, partsOf(row));
    let updated: ResourceRow;
    try {
      ({ row: updated } = await deps.lifecycle.update(
        claimOf(version),
        { source: { kind: "stream", body, pointer: METADATA_POINTER }, mediaType: version.resourceMediaType },
        { principal, tusUploadId: row.id },
      ));
    } catch (err) {
      throw await giveUp(row, err);
    }
    await dropParts(blobs, row.id);
    return { primary: updated, files: null };
  }

  async function collectExpired(): Promise<void> {
    await collectExpiredUploads(uploads, blobs, now(), COLLECT_PER_CREATE);
  }

  return {
    get,
    collectExpired,
    outcome,

    async create(target: TusTarget, length: number, principal: Principal): Promise<TusUploadRow> {
      // A new version: the lock and the resource are checked now, before any byte is sent (and again at the end).
      const tenantId =
        "newVersion" in target
          ? (await deps.lifecycle.contentTarget(claimOf(target.newVersion), principal)).tenantId
          : target.resourceTenantId;
      assertTenant(principal, tenantId);
      assertCan(principal, "create");
      if (length > deps.maxBytes) {
        const detail = `the upload is larger than the limit of ${deps.maxBytes} bytes`;
        throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: "/header/upload-length", detail }] });
      }
      // Upload-Length is known up front: an upload that cannot fit is refused before any byte is sent.
      await deps.quotas.precheck(tenantId, length);
      await collectExpired();
      const at = now();
      const reservation = deps.quotas.reservation(tenantId, length);
      let row: TusUploadRow;
      try {
        row = await uploads.create(
          {
            id: randomId(),
            tenantId,
            fields: JSON.stringify(target),
            length,
            ...ownershipOf(principal),
            createdAt: at,
            expiresAt: at + deps.expiryMs,
          },
          reservation,
        );
      } catch (err) {
        throw (await deps.quotas.refusal(err, reservation)) ?? err;
      }
      // Counted with this upload in: of creations racing for the last places, none gets past the limit.
      const open = deps.maxPending === 0 ? 0 : await uploads.unfinished(row.tenantId, at);
      if (open > deps.maxPending) {
        await uploads.terminate(row.id);
        const detail = `tenant ${row.tenantId} has ${deps.maxPending} unfinished uploads, the most CMS_TUS_MAX_PENDING_PER_TENANT allows: finish or terminate one first`;
        throw new ProblemError("QUOTA_EXCEEDED", detail, { errors: [{ pointer: "/quota/pendingUploads", detail }] });
      }
      return row;
    },

    /**
     * Stores `body` as the part at `offset` (which must be the upload's offset: 409 otherwise) and
     * advances the offset by the bytes actually stored. A body that would pass Upload-Length is 413.
     */
    async append(
      row: TusUploadRow,
      offset: number,
      body: ReadableStream<Uint8Array>,
      checksum?: Uint8Array,
    ): Promise<TusUploadRow> {
      const mismatch = () =>
        new ProblemError("CONFLICT", `Upload-Offset ${offset} is not the upload's offset`, {
          headers: { "upload-offset": String(row.offset) },
        });
      if (row.state !== "pending" || offset !== row.offset) {
        await body.cancel().catch(() => {});
        throw await refusal(row.id, mismatch);
      }
      const key = parseBlobKey(`${partsPrefix(row.id)}${String(offset).padStart(16, "0")}-${randomId()}`);
      const hasher = checksum ? new Sha256() : undefined;
      let size: number;
      try {
        size = (await blobs.put(key, keepWhatArrived(body, hasher), { maxBytes: row.length - offset })).size;
      } catch (err) {
        if (err instanceof StorageError && err.code === "TOO_LARGE") {
          const detail = `the body goes past Upload-Length (${row.length})`;
          throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: "/body", detail }], cause: err });
        }
        throw err;
      }
      const digest = hasher?.digest();
      if (checksum && digest && !digest.every((b, i) => b === checksum[i])) {
        await blobs.delete(key);
        throw new ProblemError(
          "CHECKSUM_MISMATCH",
          "the body does not hash to its Upload-Checksum; nothing of it was kept",
          {
            errors: [{ pointer: "/header/upload-checksum", detail: "sha256 mismatch" }],
          },
        );
      }
      if (size === 0) {
        await blobs.delete(key);
        return row;
      }
      const at = now();
      const advanced = await uploads.advance(
        row.id,
        offset,
        offset + size,
        [...partsOf(row), { key, size }],
        at,
        at + deps.expiryMs,
      );
      if (!advanced) {
        // Another PATCH at the same offset won (its bytes count, ours go), or the upload went meanwhile.
        await blobs.delete(key);
        throw await refusal(row.id, mismatch);
      }
      return advanced;
    },

    /**
     * Turns a complete upload into a resource. Content the rules refuse (a bad zip, a digest
     * mismatch…) ends the upload: resending the same bytes could not help. Anything else (storage,
     * database) leaves it complete, and an empty PATCH at its end tries again.
     */
    async finish(complete: TusUploadRow, principal: Principal): Promise<Created> {
      const at = now();
      const row = await uploads.claim(complete.id, at, at + deps.expiryMs);
      if (!row) throw await refusal(complete.id, () => new ProblemError("CONFLICT", "the upload is not complete"));
      const target = targetOf(row);
      if ("newVersion" in target) return finishNewVersion(row, target.newVersion, principal);
      const fields = target;
      const digest: ExpectedDigest | undefined = fields.expectedSha256
        ? { sha256: fields.expectedSha256.toLowerCase(), pointer: `${METADATA_POINTER}/expectedSha256` }
        : undefined;
      const body = concatenated(blobs, partsOf(row));
      // The upload's creator owns what it becomes, whoever sends the last bytes (an admin may).
      const owner: Ownership = { owner: row.owner, ownerIssuer: row.ownerIssuer };
      let created: Created;
      try {
        created = await resources.create(
          fields,
          { kind: "stream", body, pointer: METADATA_POINTER, digest, mediaType: fields.filetype },
          { principal, owner, tusUploadId: row.id },
        );
      } catch (err) {
        throw await giveUp(row, err);
      }
      await dropParts(blobs, row.id);
      return created;
    },

    /** Removes the upload and its parts: 409 while a request is finishing it, 404 once it is gone. */
    async terminate(row: TusUploadRow): Promise<void> {
      if (!(await uploads.terminate(row.id))) throw await refusal(row.id, () => notFound(row.id));
      await dropParts(blobs, row.id);
    },
  };
}
