/**
 * Resource rules: ids, tenancy, creating a resource (or a zip package with its files) from an
 * external URI, inline bytes or an uploaded stream, and every read. Blobs are stored before rows;
 * rows of one creation are inserted in one batch; whatever fails discards the blobs it stored.
 */
import { assertCan, assertTenant, type Ownership, ownershipOf, type Principal } from "../auth/principal.js";
import { ProblemError } from "../problems.js";
import type { IdGenerator } from "../lib/ids.js";
import { checkedMediaType, sniffMediaType } from "../lib/media-sniff.js";
import { isZipMediaType } from "../lib/media-types.js";
import type { FinishedUpload, ListQuery, MetadataStore, UsageCharge } from "../metadata/metadata-store.js";
import type { NewResourceRow, ResourceRow } from "../metadata/schema.js";
import { type ContentService, digestMismatch, type StoredBlob } from "./content.js";
import type { ContentSource, ExpectedDigest } from "./content-source.js";
import type { FetchOrigin } from "../origin/fetch-origin.js";
import type { PackageService } from "./packages.js";
import type { QuotaService } from "./quotas.js";
import { parseUid, toUid } from "./resource-ids.js";
import { type DescriptionInput, descriptionColumns } from "./descriptions.js";
import type { Placeholder } from "../images/thumbhash.js";

export interface ResourceServiceDeps {
  store: MetadataStore;
  content: ContentService;
  packages: PackageService;
  fetchOrigin: FetchOrigin;
  newShortId: IdGenerator;
  clock: () => Date;
  quotas: QuotaService;
  /** An image's thumbhash at ingest (images/thumbhash.ts); absent where the runtime cannot decode. */
  placeholder?: Placeholder;
}

export interface RequestContext {
  /** The caller: its issuer and subject are recorded as the owner; its tenants confine the request. */
  principal: Principal;
  signal?: AbortSignal;
  /** Recorded as the owner instead of the caller (a tus upload's creator, whoever sends its last PATCH). */
  owner?: Ownership;
  /** The claimed tus upload this create finishes: recorded as done in the rows' own batch. */
  tusUploadId?: string;
  /** The claimed direct upload (createUploadURL) this create completes, likewise. */
  directUploadId?: string;
  /**
   * For a streamed upload: at least this many bytes will arrive (0 when unknown). The tenant's
   * quotas are checked against it before any is read, so a full tenant is refused at once (507).
   */
  atLeastBytes?: number;
}

/** The createResource fields; the descriptive ones (issue 38) are the top-level resource's, not a package's files'. */
export interface NewResource extends DescriptionInput {
  resourceAuthor: string;
  /** Absent: the origin's or uploader's type checked against the bytes, or the bytes' own type (checkedMediaType). */
  resourceMediaType?: string;
  resourceName: string;
  resourceTenantId: string;
}

/** A created resource, or for a package its start page, with the package's other files. */
export interface Created {
  primary: ResourceRow;
  /** null for a plain resource; the package's files other than the start page otherwise. */
  files: ResourceRow[] | null;
}

export type ResourceService = ReturnType<typeof createResourceService>;

const ORIGIN_DIGEST_POINTER = "/body/resourceExternalURI";

/**
 * The digest the origin's bytes must match: the client's, checked against the SHA-256 the origin
 * announced (`Repr-Digest`, parsed by the fetcher) when it did (two different announcements cannot
 * both hold: refused before downloading), or the origin's alone.
 */
async function expectedFromOrigin(
  client: ExpectedDigest | undefined,
  originSha256: string | null,
  body: ReadableStream<Uint8Array>,
): Promise<ExpectedDigest | undefined> {
  if (originSha256 === null) return client;
  if (!client) return { sha256: originSha256, pointer: ORIGIN_DIGEST_POINTER };
  if (client.sha256 === originSha256) return client;
  await body.cancel().catch(() => {});
  throw digestMismatch(client);
}

/** The upload a create finishes, recorded in its batch. */
function finished(ctx: RequestContext, resourceUid: string): FinishedUpload | undefined {
  if (ctx.tusUploadId) return { uploadId: ctx.tusUploadId, resourceUid };
  if (ctx.directUploadId) return { uploadId: ctx.directUploadId, resourceUid, direct: true };
  return undefined;
}

const notFound = (what: string) => new ProblemError("NOT_FOUND", `resource ${what} not found`);

/** A live row or 404: deleted resources are never served. */
export const live = (row: ResourceRow | null, what: string): ResourceRow => {
  if (!row) throw notFound(what);
  if (row.deletedAt !== null) throw new ProblemError("NOT_FOUND", `resource ${what} was deleted`);
  return row;
};

/** getData's tenant confinement: false when the URI's context is no resource UID (nothing is there). */
function mayLookUp(context: string, principal: Principal): boolean {
  const parsed = parseUid(context);
  if (parsed) assertTenant(principal, parsed.tenantId);
  return Boolean(parsed);
}

/** Tenant confinement, then the role and ownership rule for update/lock/unlock/delete. */
export function assertMayModify(principal: Principal, row: ResourceRow): void {
  assertTenant(principal, row.tenantId);
  assertCan(principal, "modify", row);
}

export function createResourceService(deps: ResourceServiceDeps) {
  const { store, content, packages, clock } = deps;

  async function open(source: ContentSource, signal?: AbortSignal) {
    if (source.kind === "uri") {
      const origin = await deps.fetchOrigin(source.uri, { signal });
      const digest = await expectedFromOrigin(source.digest, origin.reprSha256, origin.body);
      const announcedType = origin.contentType;
      return {
        body: origin.body,
        externalUri: source.uri,
        pointer: "/body/resourceExternalURI",
        digest,
        announcedType,
        uploaderType: undefined,
      };
    }
    const body = source.kind === "bytes" ? new Response(source.bytes).body : source.body;
    const uploaderType = source.kind === "stream" ? source.mediaType : undefined;
    return {
      body: body as ReadableStream<Uint8Array>,
      externalUri: null,
      announcedType: uploaderType ?? null,
      uploaderType,
      pointer: source.pointer,
      digest: source.digest,
    };
  }

  /** Runs `insert` with the tenant's quota charge for `rows`; a refused charge becomes the quota's 507. */
  async function charged<T>(
    rows: NewResourceRow[],
    received: number,
    insert: (charge: UsageCharge) => Promise<T>,
  ): Promise<T> {
    const charge = deps.quotas.charge(
      rows[0]?.tenantId ?? "",
      rows.reduce((sum, r) => sum + r.size, 0),
      received,
    );
    try {
      return await insert(charge);
    } catch (err) {
      throw (await deps.quotas.refusal(err, charge)) ?? err;
    }
  }

  /** A top-level resource's row for `blob`, owned by the caller (or `ctx.owner`). */
  async function newRow(
    input: NewResource,
    blob: StoredBlob,
    mediaType: string,
    externalUri: string | null,
    ctx: RequestContext,
  ): Promise<NewResourceRow> {
    const shortId = deps.newShortId();
    const uid = toUid(shortId, input.resourceTenantId);
    const now = clock().getTime();
    return {
      uid,
      shortId,
      tenantId: input.resourceTenantId,
      context: uid,
      path: input.resourceName,
      parentUid: null,
      name: input.resourceName,
      author: input.resourceAuthor,
      mediaType,
      externalUri,
      size: blob.size,
      sha256: blob.sha256,
      blobKey: blob.key,
      width: blob.width,
      height: blob.height,
      thumbhash: (await deps.placeholder?.(blob)) ?? null,
      ...(ctx.owner ?? ownershipOf(ctx.principal)),
      createdAt: now,
      updatedAt: now,
      ...descriptionColumns(input),
    };
  }

  /** Checks the tenant of a UID before any lookup, so a confined caller learns nothing about others. */
  async function lookup(uid: string, principal: Principal): Promise<ResourceRow | null> {
    const parsed = parseUid(uid);
    if (!parsed) return null;
    assertTenant(principal, parsed.tenantId);
    return store.findByUid(uid);
  }

  return {
    /** Opens the content for a new resource; a resource with a zip media type becomes a package. */
    open,

    async create(input: NewResource, source: ContentSource, ctx: RequestContext): Promise<Created> {
      assertTenant(ctx.principal, input.resourceTenantId);
      if (ctx.atLeastBytes !== undefined) await deps.quotas.precheck(input.resourceTenantId, ctx.atLeastBytes);
      const { body, externalUri, pointer, digest, announcedType, uploaderType } = await open(source, ctx.signal);
      // No declared type: the bytes' first KiB are kept as they stream by, to check the origin's or uploader's against.
      const declared = input.resourceMediaType;
      const sniffed = declared === undefined ? sniffMediaType(body) : undefined;
      const stored: StoredBlob[] = [];
      try {
        const blob = await content.put(input.resourceTenantId, sniffed?.body ?? body, pointer, digest);
        stored.push(blob);
        const mediaType = declared ?? checkedMediaType(announcedType, await sniffed?.mediaType());
        const row = await newRow(input, blob, mediaType, externalUri, ctx);
        const uid = row.uid;
        // Only the client's zip type explodes (declared, or its upload's): an origin's or the bytes' is no request.
        const asked = declared ?? uploaderType;
        if (asked === undefined || !isZipMediaType(asked))
          return {
            primary: await charged([row], blob.size, (charge) => store.insert(row, charge, finished(ctx, uid))),
            files: null,
          };
        const pkg = await packages.explode(row, pointer, stored);
        const all = [row, ...pkg.files];
        const startUid = pkg.files.find((r) => r.path === pkg.startPath)?.uid ?? uid;
        const inserted = await charged(all, blob.size, (charge) =>
          store.insertAll(all, charge, finished(ctx, startUid)),
        );
        const files = inserted.filter((r) => r.parentUid === uid);
        const start = files.find((r) => r.path === pkg.startPath) as ResourceRow;
        // A package answers with its start page and lists the other files; getParentUuid gives the zip.
        return { primary: start, files: files.filter((r) => r !== start) };
      } catch (err) {
        await content.discard(stored);
        throw content.insertFailure(err);
      }
    },

    /**
     * A plain resource for content `content.adopt` put in place (a direct upload, a duplicate): the
     * media type is the declared one checked against the bytes' signature, as for an upload.
     */
    async createFromStored(
      input: NewResource,
      blob: StoredBlob,
      sniffedType: string | undefined,
      received: number,
      ctx: RequestContext,
    ): Promise<Created> {
      try {
        const row = await newRow(input, blob, checkedMediaType(input.resourceMediaType, sniffedType), null, ctx);
        // `received`: what the tenant uploaded to storage (0 for a duplicate), though not through the service.
        const primary = await charged([row], received, (charge) => store.insert(row, charge, finished(ctx, row.uid)));
        return { primary, files: null };
      } catch (err) {
        await content.discard([blob]);
        throw content.insertFailure(err);
      }
    },

    /**
     * The live resource at `<context>/<path>` (getData). `found`: that row as this request's fast path
     * already looked it up (delivery/handed-over-row.ts); used instead of a second lookup, after the same checks.
     */
    async findByUri(context: string, path: string, principal: Principal, found?: ResourceRow): Promise<ResourceRow> {
      if (!mayLookUp(context, principal)) return live(null, `${context}/${path}`);
      const row = found?.context === context && found.path === path ? found : await store.findByUri(context, path);
      return live(row, `${context}/${path}`);
    },

    /** findByUri in the same call, where the store looks up synchronously (store.findByUriNow); undefined elsewhere. */
    findByUriNow(context: string, path: string, principal: Principal): ResourceRow | undefined {
      const { findByUriNow } = store;
      if (!findByUriNow) return undefined;
      const row = mayLookUp(context, principal) ? findByUriNow(context, path) : null;
      // Not known in this call (a remote database's row cache missed): the caller asks findByUri.
      if (row === undefined) return undefined;
      return live(row, `${context}/${path}`);
    },

    /** The live resource with this UID. */
    async findByUid(uid: string, principal: Principal): Promise<ResourceRow> {
      return live(await lookup(uid, principal), uid);
    },

    /** Any row with this UID, deleted or not (revision history). */
    async findAnyByUid(uid: string, principal: Principal): Promise<ResourceRow> {
      const row = await lookup(uid, principal);
      if (!row) throw notFound(uid);
      return row;
    },

    /** The UID of the package a file came from; 404 for a top-level resource. */
    async parentOf(uid: string, principal: Principal): Promise<string> {
      const row = live(await lookup(uid, principal), uid);
      if (!row.parentUid)
        throw new ProblemError("NOT_FOUND", `resource ${uid} has no parent: it is not part of a package`);
      return row.parentUid;
    },

    /** A resource and, for a package, its live files. */
    async query(uid: string, principal: Principal): Promise<{ row: ResourceRow; files: ResourceRow[] | null }> {
      const row = live(await lookup(uid, principal), uid);
      const files = await store.children(uid);
      return { row, files: files.length > 0 || isZipMediaType(row.mediaType) ? files : null };
    },

    async list(query: ListQuery, principal: Principal): Promise<ResourceRow[]> {
      assertTenant(principal, query.tenantId);
      return store.list(query);
    },
  };
}
