/**
 * Resource rules: ids, tenancy, and the all-or-nothing pairing of a metadata row with its blob.
 * A row is inserted only after its blob is durable; a failed insert removes a blob nothing uses.
 */
import { assertTenant, type Principal } from "../auth/principal.js";
import { ProblemError } from "../errors.js";
import { type IdGenerator, SHORT_ID_PATTERN } from "../lib/ids.js";
import type { BlobEntity, OpenBlob } from "../lib/serve-blob.js";
import type { ResourceRow } from "../metadata/schema.js";
import type { ResourceStore } from "../metadata/resource-store.js";
import type { CreateResourceRequest } from "../routes/resources/schemas.js";
import { type BlobKey, type BlobStore, StorageError } from "../storage/blob-store.js";
import { contentKeyUnder, tenantPrefix } from "../storage/keys.js";
import type { FetchOrigin } from "./origin.js";

export interface ResourceServiceDeps {
  blobs: BlobStore;
  store: ResourceStore;
  fetchOrigin: FetchOrigin;
  newShortId: IdGenerator;
  clock: () => Date;
  maxResourceBytes: number;
}

export interface RegisterContext {
  /** The caller: its subject is recorded as the owner; its tenants confine the request. */
  principal: Principal;
  signal?: AbortSignal;
}

export type ResourceService = ReturnType<typeof createResourceService>;

export const toUid = (shortId: string, tenantId: string) => `${shortId}-${tenantId}`;

/** Splits `<shortId>-<tenantId>`; null when the text cannot be a UID (so the caller answers 404). */
export function parseUid(uid: string): { shortId: string; tenantId: string } | null {
  const dash = uid.indexOf("-");
  if (dash < 0) return null;
  const shortId = uid.slice(0, dash);
  const tenantId = uid.slice(dash + 1);
  return SHORT_ID_PATTERN.test(shortId) && tenantId.length > 0 ? { shortId, tenantId } : null;
}

const EXTERNAL_URI = "/body/resourceExternalURI";

export function createResourceService(deps: ResourceServiceDeps) {
  const { blobs, store, fetchOrigin, clock, maxResourceBytes } = deps;

  async function storeContent(tenantId: string, body: ReadableStream<Uint8Array>) {
    const prefix = await tenantPrefix(tenantId);
    try {
      return await blobs.putContentAddressed(body, (info) => contentKeyUnder(prefix, info.sha256), {
        maxBytes: maxResourceBytes,
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === "TOO_LARGE") {
        throw new ProblemError("PAYLOAD_TOO_LARGE", `the content exceeds the limit of ${maxResourceBytes} bytes`, {
          errors: [{ pointer: EXTERNAL_URI, detail: `content larger than ${maxResourceBytes} bytes` }],
          cause: err,
        });
      }
      throw err;
    }
  }

  /** Removes a blob we just created if no row references it (it may be shared by identical content). */
  async function discardIfUnreferenced(key: BlobKey) {
    if ((await store.countByBlobKey(key)) === 0) await blobs.delete(key);
  }

  return {
    async register(input: CreateResourceRequest, ctx: RegisterContext): Promise<ResourceRow> {
      assertTenant(ctx.principal, input.resourceTenantId);
      const origin = await fetchOrigin(input.resourceExternalURI, { signal: ctx.signal });
      const blob = await storeContent(input.resourceTenantId, origin.body);
      const shortId = deps.newShortId();
      const now = clock().getTime();
      try {
        return await store.insert({
          uid: toUid(shortId, input.resourceTenantId),
          shortId,
          tenantId: input.resourceTenantId,
          name: input.resourceName,
          author: input.resourceAuthor,
          mediaType: input.resourceMediaType,
          externalUri: input.resourceExternalURI,
          size: blob.size,
          sha256: blob.sha256,
          blobKey: blob.key,
          owner: ctx.principal.subject,
          createdAt: now,
          updatedAt: now,
        });
      } catch (err) {
        if (blob.created) await discardIfUnreferenced(blob.key).catch(() => {});
        throw err;
      }
    },

    /**
     * The row for `uid` + `name`, or NOT_FOUND (also for a wrong name or a UID nobody registered).
     * A caller confined to other tenants gets FORBIDDEN before any lookup, so nothing leaks.
     */
    async find(uid: string, name: string, principal: Principal): Promise<ResourceRow> {
      const parsed = parseUid(uid);
      if (parsed) assertTenant(principal, parsed.tenantId);
      const row = parsed ? await store.findByUid(uid) : null;
      if (!row || row.name !== name) throw new ProblemError("NOT_FOUND", `resource ${uid}/${name} not found`);
      return row;
    },

    /** What serveBlob needs to answer GET/HEAD for a row. */
    content(row: ResourceRow): { entity: BlobEntity; open: OpenBlob } {
      return {
        entity: {
          size: row.size,
          etag: `"${row.sha256}"`,
          lastModified: new Date(row.updatedAt),
          contentType: row.mediaType,
          filename: row.name,
        },
        open: async (range) => {
          const blob = await blobs.get(row.blobKey as BlobKey, range);
          // A row without its blob is a server fault (the volume was tampered with), never bad input.
          if (!blob) throw new Error(`blob ${row.blobKey} of resource ${row.uid} is missing`);
          return blob.body;
        },
      };
    },
  };
}
