/**
 * MetadataStore: the metadata operations the services need, implemented once with drizzle over any
 * async SQLite dialect (libSQL on Node/Bun, D1 on Workers). With its parts (lock-store, blob-ledger,
 * tus-store; prebuilt for the statements every create runs), the only code that builds queries.
 *
 * Atomicity without interactive transactions (D1 has none): every state change is one statement or
 * one `db.batch([...])`, which both libSQL and D1 run as a single transaction. Conditions that
 * must hold at commit time (the caller's lock is live, the revision is the one the caller saw) are
 * part of the statements themselves (`WHERE … AND EXISTS (…)`), never checked in a separate read.
 */
import { createDerivativeStore, type DerivativeStore } from "./derivative-store.js";
import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  gt,
  gte,
  inArray,
  isNotNull,
  isNull,
  lt,
  or,
  type Placeholder,
  SQL,
  sql,
} from "drizzle-orm";
import { consumeReservations, createBlobLedger, type BlobLedger } from "./blob-ledger.js";
import { createLockStore, type LockStore } from "./lock-store.js";
import { mediaTypeMatch } from "./media-type-match.js";
import { createSearchStore, type SearchStore } from "./search-store.js";
import { type Bindable, placeholders, prebuilt } from "./prebuilt.js";
import type { BatchSQLiteDatabase, LockProof, UsageCharge } from "./store-types.js";
import { createTusUploadStore, type TusUploadStore } from "./tus-store.js";
import { createDirectUploadStore, type DirectUploadStore } from "./direct-upload-store.js";
import { createWebhookStore, recordEvents, type WebhookStore } from "./webhook-store.js";
import {
  blobLedger,
  dataFixes,
  deployment,
  locks,
  type NewResourceRow,
  type ResourceRow,
  resources,
  type RevisionAction,
  type RevisionRow,
  revisions,
  type TenantUsageRow,
  tenantUsage,
} from "./schema.js";

// Kept in their own module so lock-store.ts and tus-store.ts can use them without importing this file back.
export type { AnySQLiteDatabase, BatchSQLiteDatabase, LockProof, UsageCharge } from "./store-types.js";

/** What updateResource may change; omitted fields keep their value. */
export type ResourceChanges = Partial<
  Pick<
    ResourceRow,
    "name" | "author" | "mediaType" | "externalUri" | "size" | "sha256" | "blobKey" | "width" | "height" | "thumbhash"
  >
>;

export interface GuardedChange {
  uid: string;
  /** The revision the caller read; the change applies only if it is still the latest. */
  expectedRevision: number;
  lock: LockProof;
  actor: string | null;
  now: number;
}

export interface ListQuery {
  tenantId: string;
  author?: string;
  /** Compared with the stored type's essence (before any `;`), case-insensitively; `type/*` matches the family. */
  mediaType?: string;
  namePrefix?: string;
  parentUid?: string;
  /** Inclusive lower and exclusive upper bound, epoch ms. */
  createdFrom?: number;
  createdBefore?: number;
  /** Keyset cursor: rows strictly after this (createdAt, uid) in the list order. */
  after?: { createdAt: number; uid: string };
  /** (createdAt, uid) descending instead of ascending. */
  newestFirst?: boolean;
  limit: number;
}

/** The claimed tus upload a create finishes: recorded in the create's batch (TusUploadStore.finishing). */
export interface FinishedUpload {
  uploadId: string;
  /** A direct upload (createUploadURL) instead of a tus one. */
  direct?: boolean;
  /** The resource the upload's HEAD names: the created resource, or a package's start page. */
  resourceUid: string;
}

export interface MetadataStore {
  /**
   * Inserts resources that share one `context` (a resource, or a package with its files) and their
   * first revisions, all or nothing, consuming one ledger reservation per row. Rejects (the
   * database's BLOB_NOT_RESERVED, see `isBlobNotReserved`) if a row's blob is not reserved in the ledger.
   */
  insertAll(rows: NewResourceRow[], charge?: UsageCharge, upload?: FinishedUpload): Promise<ResourceRow[]>;
  insert(row: NewResourceRow, charge?: UsageCharge, upload?: FinishedUpload): Promise<ResourceRow>;
  /** The tenant's usage counters, or null before its first charge. */
  usage(tenantId: string): Promise<TenantUsageRow | null>;
  /** Every tenant's usage counters (`only`: those tenants'), by tenant id. */
  tenantUsages(only?: readonly string[]): Promise<TenantUsageRow[]>;
  /** Revision rows of the tenant's resources. */
  revisionCount(tenantId: string): Promise<number>;
  /** Deleted rows included: callers decide what a deleted resource means for them. */
  findByUid(uid: string): Promise<ResourceRow | null>;
  /**
   * `version`: the content version the URL names (a sha256 prefix, issue 28's `?v=`), when it names
   * one; a row cache may serve a row that matches it longer (metadata/row-cache.ts). Stores ignore it.
   */
  findByUri(context: string, path: string, version?: string): Promise<ResourceRow | null>;
  /**
   * findByUri without a promise, where the store can look up synchronously (the prepared read
   * connection of Node and Bun) or has the row in memory (metadata/row-cache.ts): the fast paths then
   * answer a cached blob in the same call. Undefined: not known without a round trip (use findByUri).
   */
  findByUriNow?(context: string, path: string, version?: string): ResourceRow | null | undefined;
  /** Live files of a package, by path. */
  children(parentUid: string): Promise<ResourceRow[]>;
  /** Live resources of a tenant in (createdAt, uid) order; at most `limit` rows. */
  list(query: ListQuery): Promise<ResourceRow[]>;
  /** Applies `changes` as a new "update" revision if the guard holds; null if it does not. */
  /** `upload`: the claimed tus upload whose bytes are the new content, recorded finished only if the change applied. */
  update(
    change: GuardedChange,
    changes: ResourceChanges,
    charge?: UsageCharge,
    upload?: FinishedUpload,
  ): Promise<ResourceRow | null>;
  /** Marks the resource and its package files deleted (a "delete" revision each) and drops its lock; null if the guard fails. */
  softDelete(change: GuardedChange): Promise<ResourceRow | null>;
  /**
   * Removes the resource, its files, revisions and locks for good, and marks the blobs they used for
   * the collector's attention (`now`); the blob keys they used, or null if unknown.
   */
  purge(uid: string, now: number): Promise<{ uids: string[]; blobKeys: string[] } | null>;
  revisions(uid: string): Promise<RevisionRow[]>;
  revision(uid: string, revision: number): Promise<RevisionRow | null>;
  /** The latest revision of `uid` whose SHA-256 starts with `prefix` (lowercase hex), or null (versioned URLs). */
  revisionBySha256Prefix(uid: string, prefix: string): Promise<RevisionRow | null>;
  /** How many rows (current or past revisions) point at a blob, so a blob is removed only when nothing does. */
  countByBlobKey(blobKey: string): Promise<number>;
  locks: LockStore;
  /** Resumable (tus) uploads in progress. */
  tusUploads: TusUploadStore;
  /** Uploads by signed URL (createUploadURL) not yet expired. */
  directUploads: DirectUploadStore;
  ledger: BlobLedger;
  /** Webhook subscriptions and their outbox; every change above records its events in its own batch. */
  webhooks: WebhookStore;
  /** The image derivative cache's index: sizes and last uses (images/derivative-index.ts). */
  derivatives: DerivativeStore;
  /** Search, folders and the descriptive fields' updates (issue 38). */
  search: SearchStore;
  /** Throws if the database cannot be queried (readiness). */
  ping(): Promise<void>;
  /**
   * This database's deployment id (table `deployment`): made on first use, then the same for every
   * caller, racing ones and other processes included. The blob store's owner marker holds it.
   */
  deploymentId(): Promise<string>;
  /**
   * Gives rows recorded before owners had an issuer (owner set, owner_issuer null) to `issuer`, the
   * only issuer whose tokens could have created them; returns how many rows changed. Done once per
   * database (recorded in data_fixes): later calls only read that record and return 0.
   */
  adoptLegacyOwners(issuer: string): Promise<number>;
}

/** data_fixes' name for the owner adoption (also written by drizzle/0010_adopt_legacy_owners.sql). */
const ADOPT_LEGACY_OWNERS = "adopt_legacy_owners";

/** D1 binds at most 100 parameters per statement; multi-row inserts are chunked to stay under it. */
const MAX_PARAMS_PER_STATEMENT = 100;
const RESOURCE_COLUMNS = getTableColumns(resources);
const RESOURCE_KEYS = Object.keys(RESOURCE_COLUMNS) as (keyof ResourceRow)[];
const ROWS_PER_INSERT = Math.max(1, Math.floor(MAX_PARAMS_PER_STATEMENT / RESOURCE_KEYS.length));
const USAGE_KEYS = Object.keys(getTableColumns(tenantUsage)) as (keyof TenantUsageRow)[];

/**
 * The row exactly as inserting `row` stores it: every column, those left out at their schema
 * default or null. Creates answer with it instead of reading the row back (RETURNING).
 */
function storedRow(row: NewResourceRow): ResourceRow {
  const stored: Record<string, unknown> = {};
  for (const key of RESOURCE_KEYS) {
    const column = RESOURCE_COLUMNS[key];
    const given = row[key];
    if (given !== undefined) stored[key] = given;
    else if (column.defaultFn || column.default instanceof SQL)
      throw new TypeError(`storedRow: the default of ${key} is computed by the database`);
    else stored[key] = column.default ?? null;
  }
  return stored as ResourceRow;
}

/** The charge as the `tenant_usage` row a tenant's first write inserts. */
const usageRow = (c: UsageCharge): TenantUsageRow => ({
  tenantId: c.tenantId,
  bytes: c.bytes,
  resources: c.resources,
  ingressDay: c.day,
  ingressBytes: c.ingressBytes,
  maxBytes: c.limits.bytes,
  maxResources: c.limits.resources,
  maxIngressBytes: c.limits.ingressBytesPerDay,
});

const chargeStatement = (db: BatchSQLiteDatabase, row: Bindable<TenantUsageRow>) =>
  db
    .insert(tenantUsage)
    .values(row)
    .onConflictDoUpdate({
      target: tenantUsage.tenantId,
      set: {
        bytes: sql`${tenantUsage.bytes} + excluded.bytes`,
        resources: sql`${tenantUsage.resources} + excluded.resources`,
        // A new day starts the day's count afresh.
        ingressBytes: sql`case when ${tenantUsage.ingressDay} = excluded.ingress_day then ${tenantUsage.ingressBytes} + excluded.ingress_bytes else excluded.ingress_bytes end`,
        ingressDay: sql`excluded.ingress_day`,
        maxBytes: sql`excluded.max_bytes`,
        maxResources: sql`excluded.max_resources`,
        maxIngressBytes: sql`excluded.max_ingress_bytes`,
      },
    });

export function createMetadataStore(db: BatchSQLiteDatabase): MetadataStore {
  // getData's lookup runs on every read: built and prepared once instead of per request.
  const findByUriQuery = db
    .select()
    .from(resources)
    .where(and(eq(resources.context, sql.placeholder("context")), eq(resources.path, sql.placeholder("path"))))
    .limit(1)
    .prepare();
  /** Copies the current state of the matching resources into `revisions` (revision numbers as stored). */
  const snapshot = (
    action: RevisionAction | Placeholder,
    actor: string | null | Placeholder,
    now: number | Placeholder,
    where: SQL,
  ) =>
    db
      .insert(revisions)
      .select(
        sql`select ${resources.uid}, ${resources.revision}, ${action}, ${resources.name}, ${resources.author}, ${resources.mediaType}, ${resources.size}, ${resources.sha256}, ${resources.blobKey}, ${actor}, ${now} from ${resources} where ${where}`,
      )
      // Only when an earlier, committed change already wrote this revision number (then the guarded
      // UPDATE in the same batch changed nothing): never a duplicate, never a failed batch.
      .onConflictDoNothing();

  const liveLock = (uid: string, lock: LockProof, now: number) =>
    sql`exists (select 1 from ${locks} where ${locks.name} = ${uid} and ${locks.lockId} = ${lock.lockId} and ${locks.owner} = ${lock.owner} and ${locks.holder} is ${lock.holder} and ${locks.expiresAt} > ${now})`;

  const guard = (c: GuardedChange) =>
    and(
      eq(resources.uid, c.uid),
      eq(resources.revision, c.expectedRevision),
      isNull(resources.deletedAt),
      liveLock(c.uid, c.lock, c.now),
    );

  /** The row the guarded UPDATE produced: same uid, next revision, stamped in this batch. */
  const justChanged = (c: GuardedChange, extra?: SQL) =>
    and(
      eq(resources.uid, c.uid),
      eq(resources.revision, c.expectedRevision + 1),
      eq(resources.updatedAt, c.now),
      extra,
    ) as SQL;

  /**
   * Stored bytes of the resources `which` selects (a condition on `resources`): the sizes of the
   * distinct contents each keeps, its current one and its earlier revisions'. Identical content kept
   * by two resources counts twice (each references it); kept twice by one resource, once.
   */
  const keptBytes = (which: SQL) =>
    sql`select coalesce(sum(size), 0) from (select ${resources.uid} as uid, ${resources.blobKey} as blob_key, ${resources.size} as size from ${resources} where ${which} union select ${revisions.resourceUid}, ${revisions.blobKey}, ${revisions.size} from ${revisions} where ${revisions.resourceUid} in (select ${resources.uid} from ${resources} where ${which}))`;

  const familyOf = (uid: string) => sql`(${resources.uid} = ${uid} or ${resources.parentUid} = ${uid})`;

  // The statements of every create, prebuilt (prebuilt.ts): insertAll's batch is the ingest's hot path.
  const insertRows = new Map<number, ReturnType<typeof prebuilt<Record<string, unknown>>>>();
  /** The insert of `count` rows; the placeholders of row i are the column keys suffixed with i. */
  const insertStatement = (count: number) => {
    let statement = insertRows.get(count);
    if (!statement) {
      // Each row's seq (the full-text key) given by the insert itself, one past the highest (the
      // subquery is evaluated once per statement, hence + i): saves the trigger its UPDATE per row.
      const rows = Array.from({ length: count }, (_, i) => ({
        ...placeholders<ResourceRow>(RESOURCE_KEYS, String(i)),
        seq: sql`(select coalesce(max(${resources.seq}), 0) + ${i + 1} from ${resources})`,
      }));
      statement = prebuilt(db, db.insert(resources).values(rows));
      insertRows.set(count, statement);
    }
    return statement;
  };
  const consumeOnCreate = prebuilt<{ keys: string; now: number }>(
    db,
    consumeReservations(db, sql.placeholder("keys"), sql.placeholder("now")),
  );
  const snapshotOnCreate = prebuilt<{ action: RevisionAction; actor: string | null; now: number; context: string }>(
    db,
    snapshot(
      sql.placeholder("action"),
      sql.placeholder("actor"),
      sql.placeholder("now"),
      eq(resources.context, sql.placeholder("context")),
    ),
  );
  const chargeOnWrite = prebuilt<TenantUsageRow>(db, chargeStatement(db, placeholders<TenantUsageRow>(USAGE_KEYS)));

  const store: MetadataStore = {
    async insertAll(rows, charge, upload) {
      const first = rows[0];
      if (!first) return [];
      if (rows.some((r) => r.context !== first.context)) throw new TypeError("insertAll: rows must share one context");
      const stored = rows.map(storedRow);
      const inserts = [];
      for (let i = 0; i < stored.length; i += ROWS_PER_INSERT) {
        const chunk = stored.slice(i, i + ROWS_PER_INSERT);
        const values = Object.fromEntries(
          chunk.flatMap((row, r) => RESOURCE_KEYS.filter((k) => k !== "seq").map((k) => [`${k}${r}`, row[k]])),
        );
        inserts.push(insertStatement(chunk.length)(values));
      }
      await db.batch([
        ...(inserts as [(typeof inserts)[number], ...typeof inserts]),
        consumeOnCreate({ keys: JSON.stringify(stored.map((r) => r.blobKey)), now: first.createdAt }),
        snapshotOnCreate({
          action: "create",
          actor: first.owner ?? null,
          now: first.createdAt,
          context: first.context,
        }),
        // The outbox rows, in the create's own transaction: no resource without its event, nor the reverse.
        recordEvents(
          db,
          "resource.created",
          eq(resources.context, first.context),
          first.owner ?? null,
          first.createdAt,
        ),
        // Before the charge: the upload's reservation is given back first, so the two never count together.
        ...(upload
          ? (upload.direct ? store.directUploads : store.tusUploads).finishing(upload.uploadId, upload.resourceUid)
          : []),
        ...(charge ? [chargeOnWrite(usageRow(charge))] : []),
      ]);
      return stored;
    },

    async insert(row, charge, upload) {
      const [inserted] = await store.insertAll([row], charge, upload);
      if (!inserted) throw new Error("insert returned no row");
      return inserted;
    },

    async findByUid(uid) {
      const [row] = await db.select().from(resources).where(eq(resources.uid, uid)).limit(1);
      return row ?? null;
    },

    async revisionBySha256Prefix(uid, prefix) {
      // Found through the primary key (uid, revision): a resource has few revisions to compare.
      const [row] = await db
        .select()
        .from(revisions)
        .where(and(eq(revisions.resourceUid, uid), sql`substr(${revisions.sha256}, 1, ${prefix.length}) = ${prefix}`))
        .orderBy(sql`${revisions.revision} desc`)
        .limit(1);
      return row ?? null;
    },

    async findByUri(context, path) {
      const [row] = await findByUriQuery.execute({ context, path });
      return row ?? null;
    },

    children(parentUid) {
      return db
        .select()
        .from(resources)
        .where(and(eq(resources.parentUid, parentUid), isNull(resources.deletedAt)))
        .orderBy(asc(resources.path));
    },

    list(q) {
      const [beyond, direction] = q.newestFirst ? [lt, desc] : [gt, asc];
      const essence = sql`lower(trim(substr(${resources.mediaType}, 1, instr(${resources.mediaType} || ';', ';') - 1)))`;
      const conditions = [
        eq(resources.tenantId, q.tenantId),
        isNull(resources.deletedAt),
        q.author === undefined ? undefined : eq(resources.author, q.author),
        q.mediaType === undefined ? undefined : mediaTypeMatch(essence, q.mediaType.toLowerCase()),
        // substr() compares exactly (LIKE would be case-insensitive and treat % and _ as wildcards).
        q.namePrefix === undefined
          ? undefined
          : sql`substr(${resources.name}, 1, ${q.namePrefix.length}) = ${q.namePrefix}`,
        q.parentUid === undefined ? undefined : eq(resources.parentUid, q.parentUid),
        q.createdFrom === undefined ? undefined : gte(resources.createdAt, q.createdFrom),
        q.createdBefore === undefined ? undefined : lt(resources.createdAt, q.createdBefore),
        q.after === undefined
          ? undefined
          : or(
              beyond(resources.createdAt, q.after.createdAt),
              and(eq(resources.createdAt, q.after.createdAt), beyond(resources.uid, q.after.uid)),
            ),
      ];
      return db
        .select()
        .from(resources)
        .where(and(...conditions))
        .orderBy(direction(resources.createdAt), direction(resources.uid))
        .limit(q.limit);
    },

    async update(c, changes, charge, upload) {
      const applied = sql`exists (select 1 from ${resources} where ${justChanged(c)})`;
      const [updated] = await db.batch([
        db
          .update(resources)
          .set({ ...changes, revision: c.expectedRevision + 1, updatedAt: c.now })
          .where(guard(c))
          .returning(),
        snapshot("update", c.actor, c.now, justChanged(c)),
        recordEvents(db, "resource.updated", justChanged(c), c.actor, c.now),
        // Before the charge, as for a create: the upload's reservation is given back first.
        ...(upload ? store.tusUploads.finishing(upload.uploadId, upload.resourceUid, applied) : []),
        // Charged only if the guarded change applied (the tenant's row exists since its first creation);
        // content an earlier revision of this resource already keeps adds no stored bytes.
        ...(charge
          ? [
              db
                .update(tenantUsage)
                .set({
                  bytes: sql`${tenantUsage.bytes} + case when exists (select 1 from ${revisions} where ${revisions.resourceUid} = ${c.uid} and ${revisions.blobKey} = ${changes.blobKey ?? null} and ${revisions.revision} <= ${c.expectedRevision}) then 0 else ${charge.bytes} end`,
                  ingressBytes: sql`case when ${tenantUsage.ingressDay} = ${charge.day} then ${tenantUsage.ingressBytes} + ${charge.ingressBytes} else ${charge.ingressBytes} end`,
                  ingressDay: charge.day,
                  maxBytes: charge.limits.bytes,
                  maxIngressBytes: charge.limits.ingressBytesPerDay,
                })
                .where(and(eq(tenantUsage.tenantId, charge.tenantId), applied)),
            ]
          : []),
        // The new content's reservation is consumed only if the guarded update applied.
        consumeReservations(db, changes.blobKey ? [changes.blobKey] : [], c.now, applied),
      ]);
      return updated[0] ?? null;
    },

    async softDelete(c) {
      const parentDeleted = sql`exists (select 1 from ${resources} p where p.uid = ${c.uid} and p.revision = ${c.expectedRevision + 1} and p.deleted_at = ${c.now})`;
      const liveChild = and(eq(resources.parentUid, c.uid), isNull(resources.deletedAt), parentDeleted);
      const [deleted] = await db.batch([
        db
          .update(resources)
          .set({ deletedAt: c.now, revision: c.expectedRevision + 1, updatedAt: c.now })
          .where(guard(c))
          .returning(),
        snapshot("delete", c.actor, c.now, justChanged(c, eq(resources.deletedAt, c.now))),
        // One event for the resource (a package's files go with it, without events of their own).
        recordEvents(db, "resource.deleted", justChanged(c, eq(resources.deletedAt, c.now)), c.actor, c.now),
        // Files of a package go with it; each gets its own delete revision.
        db
          .update(resources)
          .set({ deletedAt: c.now, revision: sql`${resources.revision} + 1`, updatedAt: c.now })
          .where(liveChild),
        snapshot("delete", c.actor, c.now, and(eq(resources.parentUid, c.uid), eq(resources.deletedAt, c.now)) as SQL),
        // A deleted resource cannot be modified, so its lock has nothing left to protect.
        db
          .delete(locks)
          .where(
            and(
              eq(locks.name, c.uid),
              sql`exists (select 1 from ${resources} p where p.uid = ${c.uid} and p.deleted_at = ${c.now})`,
            ),
          ),
      ]);
      return deleted[0] ?? null;
    },

    async purge(uid, now) {
      const family = sql`(select ${resources.uid} from ${resources} where ${familyOf(uid)})`;
      // Gives back what the family was charged: each resource's distinct contents (current and
      // earlier revisions), one resource per top-level row.
      const refund = db
        .update(tenantUsage)
        .set({
          bytes: sql`${tenantUsage.bytes} - (${keptBytes(sql`${resources.uid} in ${family}`)})`,
          resources: sql`${tenantUsage.resources} - (select count(*) from ${resources} where ${familyOf(uid)} and ${resources.parentUid} is null)`,
        })
        .where(
          sql`${tenantUsage.tenantId} = (select ${resources.tenantId} from ${resources} where ${resources.uid} = ${uid})`,
        );
      const [, , , current, past, , , removed] = await db.batch([
        // Read from the row before it goes, in the same transaction as its removal.
        recordEvents(db, "resource.purged", eq(resources.uid, uid), null, now),
        refund,
        // Recorded in the same transaction, so the collector finds these blobs even if this process dies next.
        db
          .update(blobLedger)
          .set({ checkAfter: now })
          .where(
            sql`${blobLedger.key} in (select ${resources.blobKey} from ${resources} where ${familyOf(uid)} union select ${revisions.blobKey} from ${revisions} where ${revisions.resourceUid} in ${family})`,
          ),
        db.selectDistinct({ key: resources.blobKey }).from(resources).where(familyOf(uid)),
        db.selectDistinct({ key: revisions.blobKey }).from(revisions).where(sql`${revisions.resourceUid} in ${family}`),
        db.delete(revisions).where(sql`${revisions.resourceUid} in ${family}`),
        db.delete(locks).where(sql`${locks.name} in ${family}`),
        db.delete(resources).where(familyOf(uid)).returning({ uid: resources.uid }),
      ]);
      if (removed.length === 0) return null;
      const blobKeys = [...new Set([...current, ...past].map((r) => r.key))];
      return { uids: removed.map((r) => r.uid), blobKeys };
    },

    revisions(uid) {
      return db.select().from(revisions).where(eq(revisions.resourceUid, uid)).orderBy(asc(revisions.revision));
    },

    async revision(uid, revision) {
      const [row] = await db
        .select()
        .from(revisions)
        .where(and(eq(revisions.resourceUid, uid), eq(revisions.revision, revision)))
        .limit(1);
      return row ?? null;
    },

    async usage(tenantId) {
      const [row] = await db.select().from(tenantUsage).where(eq(tenantUsage.tenantId, tenantId)).limit(1);
      return row ?? null;
    },

    async tenantUsages(only) {
      if (only?.length === 0) return [];
      return db
        .select()
        .from(tenantUsage)
        .where(only ? inArray(tenantUsage.tenantId, [...only]) : undefined)
        .orderBy(asc(tenantUsage.tenantId));
    },

    async revisionCount(tenantId) {
      const [row] = await db
        .select({ n: count() })
        .from(revisions)
        .where(
          sql`${revisions.resourceUid} in (select ${resources.uid} from ${resources} where ${resources.tenantId} = ${tenantId})`,
        );
      return row?.n ?? 0;
    },

    async countByBlobKey(blobKey) {
      const [current, past] = await db.batch([
        db.select({ n: count() }).from(resources).where(eq(resources.blobKey, blobKey)),
        db.select({ n: count() }).from(revisions).where(eq(revisions.blobKey, blobKey)),
      ]);
      return (current[0]?.n ?? 0) + (past[0]?.n ?? 0);
    },

    locks: createLockStore(db),
    webhooks: createWebhookStore(db),
    derivatives: createDerivativeStore(db),
    search: createSearchStore(db),
    tusUploads: createTusUploadStore(db, (charge) => chargeOnWrite(usageRow(charge))),
    directUploads: createDirectUploadStore(db, (charge) => chargeOnWrite(usageRow(charge))),
    ledger: createBlobLedger(db),

    async ping() {
      // One index lookup reads the database; counting its rows (as before) took time in proportion to
      // its size on every readiness probe.
      await db.select({ uid: resources.uid }).from(resources).where(eq(resources.uid, "")).limit(1);
    },

    async deploymentId() {
      // One batch (one transaction): the first caller's insert wins, every caller reads the winner.
      const [, rows] = await db.batch([
        db.insert(deployment).values({ slot: 1, id: crypto.randomUUID(), createdAt: Date.now() }).onConflictDoNothing(),
        db.select({ id: deployment.id }).from(deployment).where(eq(deployment.slot, 1)),
      ]);
      const id = rows[0]?.id;
      if (id === undefined) throw new Error("the deployment row is missing after its insert");
      return id;
    },

    async adoptLegacyOwners(issuer) {
      // A read on every start, a write only on the first: no write lock (nor D1 primary write) after that.
      const done = await db
        .select({ name: dataFixes.name })
        .from(dataFixes)
        .where(eq(dataFixes.name, ADOPT_LEGACY_OWNERS))
        .limit(1);
      if (done.length > 0) return 0;
      // One batch: the rows are adopted and the fix recorded together (concurrent first starts: the same UPDATE twice).
      const [adopted] = await db.batch([
        // The same terms as resources_legacy_owner_idx's WHERE, so SQLite answers from that index.
        db
          .update(resources)
          .set({ ownerIssuer: issuer })
          .where(and(isNull(resources.ownerIssuer), isNotNull(resources.owner)))
          .returning({ uid: resources.uid }),
        db.insert(dataFixes).values({ name: ADOPT_LEGACY_OWNERS, doneAt: Date.now() }).onConflictDoNothing(),
      ]);
      return adopted.length;
    },
  };
  return store;
}
