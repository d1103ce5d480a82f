/**
 * Uploads straight to storage (docs/direct-storage.md): createUploadURL reserves the tenant's quota
 * and hands out a URL bound to one key, one size and one SHA-256 (a presigned PUT on an S3 bucket,
 * else a URL on the service itself); completeUpload makes the stored bytes a resource once they are
 * known to be exactly those: checked by the engine where it refuses a wrong signed hash (a probe
 * shows it), otherwise read once by the service. A duplicate of the tenant's content moves nothing.
 */
import { assertCan, assertTenant, type Ownership, ownershipOf, type Principal } from "../auth/principal.js";
import { toHex } from "../lib/sha256.js";
import { isZipMediaType } from "../lib/media-types.js";
import type { MetadataStore } from "../metadata/metadata-store.js";
import type { DirectUploadRow } from "../metadata/schema.js";
import { ProblemError } from "../problems.js";
import { type BlobStore, StorageError } from "../storage/blob-store.js";
import { contentKeyUnder, parseBlobKey, tenantPrefix } from "../storage/keys.js";
import type { ContentService } from "./content.js";
import type { QuotaService } from "./quotas.js";
import type { Created, NewResource, ResourceService } from "./resources.js";
import { slotKey } from "./direct-slots.js";

export interface DirectUploadServiceDeps {
  store: MetadataStore;
  blobs: BlobStore;
  content: ContentService;
  resources: ResourceService;
  quotas: QuotaService;
  clock: () => Date;
  maxBytes: number;
  /** CMS_UPLOAD_URL_TTL_SECONDS */
  ttlSeconds: number;
}

export interface UploadRequest extends NewResource {
  size: number;
  sha256: string;
}

/** createUploadURL's answer: `method` null for a duplicate (nothing to send). */
export interface UploadTicket {
  uploadId: string;
  method: "PUT" | null;
  url: string | null;
  headers: Record<string, string>;
  expiresAt: string;
}

const UPLOAD_ID_POINTER = "/body/uploadId";
const randomHex = (bytes: number) => toHex(crypto.getRandomValues(new Uint8Array(bytes)));
const sha256Hex = async (text: string) =>
  toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));

const unknown = (id: string) => new ProblemError("NOT_FOUND", `upload ${id} not found or expired`);

/** The ownership a completion must match (the upload's creator), or an admin. */
function assertMayComplete(principal: Principal, row: DirectUploadRow): void {
  assertTenant(principal, row.tenantId);
  const owner: Ownership = { owner: row.owner, ownerIssuer: row.ownerIssuer };
  try {
    assertCan(principal, "modify", owner);
  } catch {
    throw new ProblemError("FORBIDDEN", "only the creator of the upload or an admin may complete it");
  }
}

export type DirectUploadService = ReturnType<typeof createDirectUploadService>;

export function createDirectUploadService(deps: DirectUploadServiceDeps) {
  const { blobs, content, resources } = deps;
  const uploads = deps.store.directUploads;
  const now = () => deps.clock().getTime();

  /** A problem for the stored bytes, after which nothing is kept: the upload and its object go. */
  async function refuse(row: DirectUploadRow, problem: ProblemError): Promise<never> {
    await uploads.abandon(row.id);
    await blobs.delete(slotKey(row.id)).catch(() => {});
    throw problem;
  }

  const sizeMismatch = (row: DirectUploadRow, actual: number) => {
    const detail = `the stored object has ${actual} bytes, not the ${row.size} createUploadURL declared`;
    return new ProblemError("SIZE_MISMATCH", detail, { errors: [{ pointer: UPLOAD_ID_POINTER, detail }] });
  };
  const digestMismatch = (row: DirectUploadRow, cause?: unknown) => {
    const detail = `the stored object does not hash to the declared sha-256 ${row.sha256}`;
    return new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: UPLOAD_ID_POINTER, detail }], cause });
  };

  /** The resource from the upload's bytes, by the cheapest way this store allows. */
  async function build(row: DirectUploadRow, ctx: { principal: Principal; owner: Ownership }): Promise<Created> {
    const input: NewResource = {
      resourceName: row.name,
      resourceAuthor: row.author,
      resourceTenantId: row.tenantId,
      ...(row.mediaType === null ? {} : { resourceMediaType: row.mediaType }),
    };
    const expected = { size: row.size, sha256: row.sha256 };
    const create = { ...ctx, directUploadId: row.id };
    const slot = slotKey(row.id);
    if (row.duplicate) {
      const adopted = await content.adopt(row.tenantId, expected, null);
      return resources.createFromStored(input, adopted.blob, adopted.sniffedType, 0, create);
    }
    const direct = blobs.direct;
    const wantsPackage = row.mediaType !== null && isZipMediaType(row.mediaType);
    if (direct && !wantsPackage && (await direct.enforcesSignedSha256())) {
      // The engine refused any other bytes for this URL (its own SHA-256 check): copied in the bucket.
      const adopted = await content.adopt(row.tenantId, expected, (key) => direct.copy(slot, key));
      return resources.createFromStored(input, adopted.blob, adopted.sniffedType, row.size, create);
    }
    // Read once by the service: hashed, sniffed and stored as every other upload (a package explodes).
    const object = await blobs.get(slot);
    if (!object) throw new ProblemError("UPLOAD_INCOMPLETE", "the upload's bytes have not arrived");
    const { resourceMediaType, ...named } = input;
    return resources.create(
      named,
      {
        kind: "stream",
        body: object.body,
        pointer: UPLOAD_ID_POINTER,
        mediaType: resourceMediaType,
        digest: { sha256: row.sha256, pointer: UPLOAD_ID_POINTER },
      },
      create,
    );
  }

  return {
    async createUploadURL(
      request: UploadRequest,
      principal: Principal,
      serviceUrl: (id: string, token: string) => string,
    ): Promise<UploadTicket> {
      assertTenant(principal, request.resourceTenantId);
      assertCan(principal, "create");
      if (request.size > deps.maxBytes) {
        const detail = `size ${request.size} is over the limit of ${deps.maxBytes} bytes`;
        throw new ProblemError("PAYLOAD_TOO_LARGE", detail, { errors: [{ pointer: "/body/size", detail }] });
      }
      await deps.quotas.precheck(request.resourceTenantId, request.size);
      const sha256 = request.sha256.toLowerCase();
      const contentKey = contentKeyUnder(await tenantPrefix(request.resourceTenantId), sha256);
      const existing = await blobs.head(contentKey);
      const duplicate = existing !== null && existing.size === request.size && existing.sha256 === sha256;
      const id = randomHex(16);
      const at = now();
      const expiresAt = at + deps.ttlSeconds * 1000;
      let put: { url: string; headers: Record<string, string> } | null = null;
      let tokenSha256: string | null = null;
      if (!duplicate && blobs.direct) {
        put = await blobs.direct.presignPut(slotKey(id), {
          size: request.size,
          sha256,
          expiresInSeconds: deps.ttlSeconds,
        });
      } else if (!duplicate) {
        const token = randomHex(32);
        tokenSha256 = await sha256Hex(token);
        put = { url: serviceUrl(id, token), headers: { "content-type": "application/octet-stream" } };
      }
      const reservation = deps.quotas.reservation(request.resourceTenantId, request.size);
      try {
        await uploads.create(
          {
            id,
            tenantId: request.resourceTenantId,
            name: request.resourceName,
            author: request.resourceAuthor,
            mediaType: request.resourceMediaType ?? null,
            size: request.size,
            sha256,
            blobKey: duplicate ? contentKey : slotKey(id),
            duplicate,
            tokenSha256,
            ...ownershipOf(principal),
            createdAt: at,
            expiresAt,
          },
          reservation,
        );
      } catch (err) {
        throw (await deps.quotas.refusal(err, reservation)) ?? err;
      }
      return {
        uploadId: id,
        method: put ? "PUT" : null,
        url: put?.url ?? null,
        headers: put?.headers ?? {},
        expiresAt: new Date(expiresAt).toISOString(),
      };
    },

    /**
     * The bytes of an upload whose URL is the service's own (`PUT …/uploads/{id}?token=`): the token
     * is the capability, as a presigned URL's signature is. Stored only if exactly `size` bytes
     * hashing to the declared SHA-256 arrive.
     */
    async receive(
      id: string,
      token: string,
      body: ReadableStream<Uint8Array>,
      declaredLength: number | null,
    ): Promise<void> {
      const row = await uploads.find(id);
      const valid = row !== null && row.tokenSha256 !== null && row.tokenSha256 === (await sha256Hex(token));
      if (!valid || row.expiresAt <= now()) {
        await body.cancel().catch(() => {});
        throw unknown(id);
      }
      if (row.state !== "pending") {
        await body.cancel().catch(() => {});
        throw new ProblemError("CONFLICT", `upload ${id} is ${row.state}: its bytes can no longer change`);
      }
      const sizeProblem = (actual: string) =>
        new ProblemError("SIZE_MISMATCH", `${actual}, not the ${row.size} bytes createUploadURL declared`, {
          errors: [{ pointer: "/header/content-length", detail: `must be ${row.size}` }],
        });
      if (declaredLength !== null && declaredLength !== row.size) {
        await body.cancel().catch(() => {});
        throw sizeProblem(`Content-Length is ${declaredLength}`);
      }
      try {
        const info = await blobs.put(slotKey(id), body, { maxBytes: row.size, expectedSha256: row.sha256 });
        if (info.size !== row.size) {
          await blobs.delete(slotKey(id));
          throw sizeProblem(`${info.size} bytes arrived`);
        }
      } catch (err) {
        if (err instanceof StorageError && err.code === "TOO_LARGE") throw sizeProblem("more bytes arrived");
        if (err instanceof StorageError && err.code === "HASH_MISMATCH") {
          const detail = `the bytes sent do not hash to the declared sha-256 ${row.sha256}`;
          throw new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: "/body", detail }], cause: err });
        }
        throw err;
      }
    },

    async completeUpload(id: string, principal: Principal): Promise<Created> {
      const row = await uploads.find(id);
      if (!row || (row.state === "pending" && row.expiresAt <= now())) throw unknown(id);
      assertMayComplete(principal, row);
      if (row.state !== "pending")
        throw new ProblemError(
          "CONFLICT",
          row.state === "completed"
            ? `upload ${id} was completed already: resource ${row.resourceUid}`
            : `upload ${id} is being completed by another request`,
        );
      if (!row.duplicate) {
        const stored = await blobs.head(parseBlobKey(row.blobKey));
        if (!stored) throw new ProblemError("UPLOAD_INCOMPLETE", `the bytes of upload ${id} have not arrived`);
        // Engines that ignore the signed Content-Length (or a hosted PUT cut short) are caught here.
        if (stored.size !== row.size) {
          if (!(await uploads.claim(id, now()))) throw new ProblemError("CONFLICT", `upload ${id} is being completed`);
          return refuse(row, sizeMismatch(row, stored.size));
        }
      }
      const claimed = await uploads.claim(id, now());
      if (!claimed) throw new ProblemError("CONFLICT", `upload ${id} is being completed by another request`);
      try {
        const created = await build(claimed, { principal, owner: { owner: row.owner, ownerIssuer: row.ownerIssuer } });
        await blobs.delete(slotKey(id)).catch(() => {}); // the collector removes it at expiry otherwise
        return created;
      } catch (err) {
        if (err instanceof ProblemError && err.code === "DIGEST_MISMATCH") return refuse(row, digestMismatch(row, err));
        if (err instanceof StorageError && err.code === "HASH_MISMATCH") return refuse(row, digestMismatch(row, err));
        await uploads.unclaim(id); // anything else may go better next time (a retry, the bytes arriving)
        throw err;
      }
    },
  };
}
