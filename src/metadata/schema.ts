/**
 * Drizzle tables for resource metadata. drizzle-kit generates the SQL migrations in ../../drizzle/
 * from this file (`npm run db:generate`); the same migrations apply to libSQL and D1.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const resources = sqliteTable(
  "resources",
  {
    /** `<shortId>-<tenantId>`: the public identifier. */
    uid: text("uid").primaryKey(),
    shortId: text("short_id").notNull(),
    tenantId: text("tenant_id").notNull(),
    /**
     * First segment of the resourceURI (`<context>/<path>`): the resource's own UID, or for a file
     * extracted from a zip package the package's UID, so relative links between its files resolve.
     */
    context: text("context").notNull(),
    /** Rest of the resourceURI: the name given at creation, or the entry path inside the package. Never changes. */
    path: text("path").notNull(),
    /** The package (zip) a file was extracted from; null for top-level resources. */
    parentUid: text("parent_uid"),
    /** Display and download name; updateResource may change it (the URI stays). */
    name: text("name").notNull(),
    author: text("author").notNull(),
    mediaType: text("media_type").notNull(),
    externalUri: text("external_uri"),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    /** Key of the content-addressed blob; several rows may share one. */
    blobKey: text("blob_key").notNull(),
    /**
     * A raster image's displayed width and height, read from its header at ingest
     * (images/image-header.ts); null for anything else and on rows written before these columns.
     */
    width: integer("width"),
    height: integer("height"),
    /** Subject of the token that created the resource (null when auth is off). */
    owner: text("owner"),
    /**
     * Issuer of that token: the owner is issuer + subject (principal.ts `isOwner`), since two identity
     * providers may both have a subject "alice". Null with auth off, and on rows written before this
     * column existed until the first start with auth on adopts them, once (MetadataStore.adoptLegacyOwners).
     */
    ownerIssuer: text("owner_issuer"),
    /** Number of the latest row in `revisions` for this resource (1 after creation). */
    revision: integer("revision").notNull().default(1),
    /** Epoch milliseconds. */
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Set by deleteResource (soft delete): the row stays for its revisions, but is never served. */
    deletedAt: integer("deleted_at"),
    /**
     * What people describe and find a resource by (issue 38): changed by updateResourceMetadata
     * without a new revision. The texts, the tags and the name are indexed in `resources_fts`
     * (FTS5, kept in step by the triggers of the migration that added these columns).
     */
    title: text("title"),
    description: text("description"),
    altText: text("alt_text"),
    /** JSON array of distinct tags (compared case-insensitively), as given. */
    tags: text("tags").notNull().default("[]"),
    /** The tags case-folded (JavaScript's Unicode toLowerCase; SQLite's lower() folds ASCII only): what tag filters compare. */
    tagKeys: text("tag_keys").notNull().default("[]"),
    /** `/`-separated path starting and ending with `/`. */
    folder: text("folder").notNull().default("/"),
    /** JSON object of the caller's own keys. */
    metadata: text("metadata").notNull().default("{}"),
    /** Counts changes of the six fields above: the answer's opaque `metadataVersion` (If-Match). */
    metadataVersion: integer("metadata_version").notNull().default(1),
    /** An image's placeholder (thumbhash, base64), computed once at ingest; null for anything else. */
    thumbhash: text("thumbhash"),
    /**
     * The row's key in `resources_fts` (FTS5 external content keys on an integer column): given once
     * at insert by the migration's trigger (the highest so far + 1) and never changed. Not the rowid,
     * which a dump and restore, a table rebuild or VACUUM may renumber.
     */
    seq: integer("seq"),
  },
  (t) => [
    uniqueIndex("resources_short_id_unique").on(t.shortId),
    uniqueIndex("resources_context_path_unique").on(t.context, t.path),
    index("resources_tenant_created_idx").on(t.tenantId, t.createdAt),
    index("resources_blob_key_idx").on(t.blobKey),
    index("resources_parent_idx").on(t.parentUid),
    // A folder's page (searchResources?folder=…), and folders' counts: one range of this index.
    index("resources_tenant_folder_idx").on(t.tenantId, t.folder, t.createdAt),
    // Only rows still waiting for an issuer, so the one adoption reads no others.
    uniqueIndex("resources_seq_unique").on(t.seq),
    index("resources_legacy_owner_idx").on(t.uid).where(sql`${t.ownerIssuer} is null and ${t.owner} is not null`),
  ],
);

export type ResourceRow = typeof resources.$inferSelect;
export type NewResourceRow = typeof resources.$inferInsert;

/**
 * The live top-level resources directly in each folder of a tenant (the `folders` listing): kept
 * exact by triggers on `resources` (migration 0016) in the writing statement's own transaction, on
 * create, soft delete, move and purge alike; a folder with none has no row.
 */
export const folderCounts = sqliteTable(
  "folder_counts",
  {
    tenantId: text("tenant_id").notNull(),
    folder: text("folder").notNull(),
    resources: integer("resources").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.folder] })],
);

/**
 * A number per tenant that has had resources, for the full-text index: a resource's key in
 * `resources_fts` is `no × 2^40 + seq` (migration 0017), so one tenant's entries are one rowid range
 * that FTS5 reads alone. An INTEGER PRIMARY KEY: kept by dumps, table rebuilds and VACUUM.
 */
export const searchTenants = sqliteTable("search_tenants", {
  no: integer("no").primaryKey(),
  tenantId: text("tenant_id").notNull().unique(),
});

export const REVISION_ACTIONS = ["create", "update", "delete"] as const;
export type RevisionAction = (typeof REVISION_ACTIONS)[number];

/**
 * One row per state a resource has been in: created, each update, the delete. Each row keeps the
 * content (blob key) of that state, so earlier content stays fetchable after an update.
 */
export const revisions = sqliteTable(
  "revisions",
  {
    resourceUid: text("resource_uid").notNull(),
    /** 1, 2, 3… per resource. */
    revision: integer("revision").notNull(),
    action: text("action", { enum: REVISION_ACTIONS }).notNull(),
    name: text("name").notNull(),
    author: text("author").notNull(),
    mediaType: text("media_type").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    blobKey: text("blob_key").notNull(),
    /** Subject of the token that made the change (null when auth is off). */
    actor: text("actor"),
    /** Epoch milliseconds. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.resourceUid, t.revision] }), index("revisions_blob_key_idx").on(t.blobKey)],
);

export type RevisionRow = typeof revisions.$inferSelect;

/**
 * Locks, keyed by the locked name (a resource UID, or any string for the generic lock API). Kept in
 * the database so they hold across processes and restarts; a lock past `expiresAt` is free.
 */
export const locks = sqliteTable(
  "locks",
  {
    name: text("name").primaryKey(),
    lockId: text("lock_id").notNull(),
    /** The DTOs' `lockOwner` / `author`: a label chosen by the client. */
    owner: text("owner").notNull(),
    /** Who took the lock and alone may use it: principal.ts `holderOf` (issuer and subject; null when auth is off). */
    holder: text("holder"),
    /** Epoch milliseconds. */
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("locks_expires_idx").on(t.expiresAt)],
);

export type LockRow = typeof locks.$inferSelect;

/**
 * A tus upload's state: `pending` while it takes bytes, `finishing` once one request claimed it to
 * create its resource (one statement, so exactly one request finishes it), `finished` with the
 * resource's UID. While not finished it holds its Upload-Length in its tenant's `tenant_usage.bytes`.
 */
export const TUS_STATES = ["pending", "finishing", "finished"] as const;

/**
 * Resumable uploads (tus 1.0) in progress: what the finished upload will become, how far it got, and
 * the blob-store objects holding its bytes so far (a JSON list, in order). Kept after completion,
 * with the resource's UID, until it expires, so a client resuming a finished upload learns it is done.
 */
export const tusUploads = sqliteTable(
  "tus_uploads",
  {
    /** Random, unguessable: the upload URL is a capability when auth is off. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    /** The createResource fields (and expectedSha256) from Upload-Metadata, validated, as JSON. */
    fields: text("fields").notNull(),
    length: integer("length").notNull(),
    offset: integer("offset").notNull().default(0),
    /** JSON `[{ "key": …, "size": … }]`: the stored parts, in upload order. */
    parts: text("parts").notNull().default("[]"),
    owner: text("owner"),
    ownerIssuer: text("owner_issuer"),
    /** Set once the finished upload became a resource. */
    resourceUid: text("resource_uid"),
    state: text("state", { enum: TUS_STATES }).notNull().default("pending"),
    createdAt: integer("created_at").notNull(),
    /** Epoch ms after which the upload is gone (Upload-Expires) and its parts are collected. */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("tus_uploads_expires_idx").on(t.expiresAt), index("tus_uploads_tenant_idx").on(t.tenantId, t.state)],
);

export type TusUploadRow = typeof tusUploads.$inferSelect;
export type NewTusUploadRow = typeof tusUploads.$inferInsert;

/**
 * A direct upload's state (docs/direct-storage.md): `pending` until one completeUpload claims it
 * (`completing`, one statement, so exactly one request completes it), then `completed` with the
 * resource's UID. While not completed it holds its `size` in its tenant's `tenant_usage.bytes`.
 */
export const DIRECT_UPLOAD_STATES = ["pending", "completing", "completed"] as const;

/**
 * Uploads whose bytes go straight to storage by a signed URL (createUploadURL), until completeUpload
 * makes them a resource; kept until they expire, so a second completion is told it was done (409).
 */
export const directUploads = sqliteTable(
  "direct_uploads",
  {
    /** Random, unguessable. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    name: text("name").notNull(),
    author: text("author").notNull(),
    /** The client's resourceMediaType: an announcement checked against the bytes at completion. */
    mediaType: text("media_type"),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    /** The blob key the bytes go to: a `direct/<id>` slot, or the tenant's existing content (a duplicate). */
    blobKey: text("blob_key").notNull(),
    /** 1: the tenant already stores this content; nothing is sent. */
    duplicate: integer("duplicate", { mode: "boolean" }).notNull().default(false),
    /** SHA-256 (hex) of the token in a URL the service hosts itself (fs, memory, R2 without keys). */
    tokenSha256: text("token_sha256"),
    owner: text("owner"),
    ownerIssuer: text("owner_issuer"),
    resourceUid: text("resource_uid"),
    state: text("state", { enum: DIRECT_UPLOAD_STATES }).notNull().default("pending"),
    createdAt: integer("created_at").notNull(),
    /** Epoch ms after which the URL no longer works and the collector removes the upload. */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("direct_uploads_expires_idx").on(t.expiresAt)],
);

export type DirectUploadRow = typeof directUploads.$inferSelect;
export type NewDirectUploadRow = typeof directUploads.$inferInsert;

/**
 * Per-tenant usage counters, charged in the same batch as the rows they count, with the limits that
 * applied at that charge: the CHECK constraints make an over-quota batch fail as a whole, so the
 * quota holds under any concurrency and across instances sharing the database. A limit of 0 is none.
 */
export const tenantUsage = sqliteTable(
  "tenant_usage",
  {
    tenantId: text("tenant_id").primaryKey(),
    /** Sum of the sizes of the tenant's resource rows (package files included; shared blobs counted per reference). */
    bytes: integer("bytes").notNull().default(0),
    /** Top-level resources (a package counts once). */
    resources: integer("resources").notNull().default(0),
    /** UTC day number (epoch ms / 86 400 000) that `ingressBytes` counts. */
    ingressDay: integer("ingress_day").notNull().default(0),
    ingressBytes: integer("ingress_bytes").notNull().default(0),
    maxBytes: integer("max_bytes").notNull().default(0),
    maxResources: integer("max_resources").notNull().default(0),
    maxIngressBytes: integer("max_ingress_bytes").notNull().default(0),
  },
  (t) => [
    check("quota_bytes", sql`${t.maxBytes} = 0 or ${t.bytes} <= ${t.maxBytes}`),
    check("quota_resources", sql`${t.maxResources} = 0 or ${t.resources} <= ${t.maxResources}`),
    check("quota_ingress", sql`${t.maxIngressBytes} = 0 or ${t.ingressBytes} <= ${t.maxIngressBytes}`),
  ],
);

export type TenantUsageRow = typeof tenantUsage.$inferSelect;

/**
 * One row per stored content blob: the database's record of who may still need it, so a blob is
 * deleted only when the database agrees nothing references or awaits it (see services/blob-collector.ts).
 * A create *reserves* its key (pending + 1) before it checks whether the blob exists, and its row
 * insert releases the reservation in the same batch; a trigger (migration 0005) refuses any row whose
 * blob is not in this table undoomed. A collector *dooms* a row (doomed_at) before deleting the blob.
 */
export const blobLedger = sqliteTable(
  "blob_ledger",
  {
    key: text("key").primaryKey(),
    /** Creates between their reservation and their row insert (or failure). */
    pending: integer("pending").notNull().default(0),
    /** Epoch ms of the last reservation: a reservation older than the grace period counts as abandoned. */
    touchedAt: integer("touched_at").notNull(),
    /** Epoch ms when the collector should look at this blob again; null while rows reference it. */
    checkAfter: integer("check_after"),
    /** Epoch ms when a collector claimed the blob for deletion; reservations wait until it is gone. */
    doomedAt: integer("doomed_at"),
  },
  // Both indexes hold only the few rows the collector looks for (due for a look, doomed). Over every
  // row, SQLite used the doomed_at index for "doomed_at is null" — nearly all rows — so each create's
  // reservation release and each collector pass walked the whole ledger (migration 0007).
  (t) => [
    index("blob_ledger_check_idx").on(t.checkAfter).where(sql`${t.checkAfter} is not null`),
    index("blob_ledger_doomed_idx").on(t.doomedAt).where(sql`${t.doomedAt} is not null`),
  ],
);

export type BlobLedgerRow = typeof blobLedger.$inferSelect;

/**
 * This database's identity as a deployment: one row, made the first time a process starts on it
 * (MetadataStore.deploymentId). The blob store records the id of the one deployment it belongs to
 * (services/store-owner.ts), so a deployment never starts on, nor collects in, another's store.
 */
export const deployment = sqliteTable(
  "deployment",
  {
    /** Always 1: the table holds one row. */
    slot: integer("slot").primaryKey(),
    /** A random UUID. */
    id: text("id").notNull(),
    /** Epoch milliseconds. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [check("deployment_one_row", sql`${t.slot} = 1`)],
);

/**
 * One-off data fixes that need a runtime setting, so no migration can make them (a migration cannot
 * read the environment): each is done by the first start that has the setting, and recorded here so
 * no later start (or Worker isolate) repeats it. A fix with nothing to do is recorded by its migration.
 */
export const dataFixes = sqliteTable("data_fixes", {
  /** e.g. `adopt_legacy_owners` (MetadataStore.adoptLegacyOwners). */
  name: text("name").primaryKey(),
  /** Epoch milliseconds. */
  doneAt: integer("done_at").notNull(),
});

/** What a webhook subscription may be told about (services/webhooks.ts builds each body). */
export const WEBHOOK_EVENT_TYPES = [
  "resource.created",
  "resource.updated",
  "resource.locked",
  "resource.unlocked",
  "resource.deleted",
  "resource.purged",
  "resource.metadata_updated",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Admin-registered receivers of signed events (issue 31). */
export const webhookSubscriptions = sqliteTable("webhook_subscriptions", {
  id: text("id").primaryKey(),
  url: text("url").notNull(),
  /** `whsec_` + base64 of the HMAC key; shown once, at registration. */
  secret: text("secret").notNull(),
  /** JSON list of event types; `[]` = all. */
  events: text("events").notNull().default("[]"),
  /** JSON list of tenant ids; `[]` = all. */
  tenants: text("tenants").notNull().default("[]"),
  createdAt: integer("created_at").notNull(),
});

export type WebhookSubscriptionRow = typeof webhookSubscriptions.$inferSelect;

export const WEBHOOK_DELIVERY_STATES = ["pending", "delivered", "failed"] as const;

/**
 * The outbox: one row per (event, subscription), inserted by the same batch as the change it reports
 * (so neither exists without the other), delivered at least once by services/webhooks.ts. `seq`
 * orders a resource's events; `claimedUntil` is the lease of the instance delivering it.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** The `webhook-id`: kept by every redelivery so receivers can drop duplicates. */
    id: text("id").notNull(),
    subscriptionId: text("subscription_id").notNull(),
    type: text("type", { enum: WEBHOOK_EVENT_TYPES }).notNull(),
    resourceUid: text("resource_uid").notNull(),
    /** The JSON body, exactly as signed and sent. */
    payload: text("payload").notNull(),
    status: text("status", { enum: WEBHOOK_DELIVERY_STATES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** Epoch ms before which the next attempt is not made (backoff). */
    nextAttemptAt: integer("next_attempt_at").notNull(),
    /** Epoch ms until which the claiming instance owns it; past it, another takes over. */
    claimedUntil: integer("claimed_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_id_unique").on(t.id),
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("webhook_deliveries_order_idx").on(t.subscriptionId, t.resourceUid, t.seq),
  ],
);

export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

/**
 * The image derivative cache's index (issue 30): each derivative stored under `img/`, its size and
 * when it was last used, so the least recently used go first when the cache passes
 * CMS_IMAGE_CACHE_BYTES, across restarts and instances. `lastUsedAt` is coarse (a use is written at
 * most once a minute per derivative), so repeat reads stay a plain getData.
 */
export const imageDerivatives = sqliteTable(
  "image_derivatives",
  {
    /** The derivative's blob key (`img/<tenant>/<sha>/<name>`). */
    key: text("key").primaryKey(),
    size: integer("size").notNull(),
    /** Epoch ms. */
    lastUsedAt: integer("last_used_at").notNull(),
  },
  (t) => [index("image_derivatives_last_used_idx").on(t.lastUsedAt, t.key)],
);
