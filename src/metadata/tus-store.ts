/**
 * TusUploadStore: resumable uploads as rows of the metadata database, so they survive restarts and
 * are shared by instances. Every change is one statement or one batch whose conditions decide it:
 * of two PATCHes racing at one offset exactly one advances it; of two requests finishing one upload
 * exactly one claims it; a termination or an expiry never removes an upload a request is finishing.
 * An unfinished upload holds its Upload-Length in its tenant's `tenant_usage.bytes` (charged with the
 * row, given back with the row's removal, spent in the batch that inserts its resource).
 */
import { and, count, eq, gt, lte, ne, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { BatchSQLiteDatabase, UsageCharge } from "./store-types.js";
import { type NewTusUploadRow, type TusUploadRow, tenantUsage, tusUploads } from "./schema.js";

export interface TusPart {
  key: string;
  size: number;
}

/**
 * A claim this old whose upload has expired counts as abandoned (its process died mid-finish): the
 * collector then removes the upload. Finishing one upload never takes an hour.
 */
export const FINISH_LEASE_MS = 3_600_000;

export interface TusUploadStore {
  /**
   * Inserts the upload and charges `reservation` (its Upload-Length) in one batch: rejects as any
   * charge does (a `quota_*` CHECK) when the tenant has no room for it.
   */
  create(row: NewTusUploadRow, reservation: UsageCharge): Promise<TusUploadRow>;
  find(id: string): Promise<TusUploadRow | null>;
  /** Unfinished uploads of the tenant that have not expired at `now`. */
  unfinished(tenantId: string, now: number): Promise<number>;
  /** Unfinished uploads of every tenant that have not expired at `now` (the metrics' gauge). */
  pending(now: number): Promise<number>;
  /** Moves the offset from `from` to `to` with `parts`, only if it still is `from` (and the upload pending, unexpired); null otherwise. */
  advance(
    id: string,
    from: number,
    to: number,
    parts: TusPart[],
    now: number,
    expiresAt: number,
  ): Promise<TusUploadRow | null>;
  /**
   * Claims a complete, pending, unexpired upload for the one request that will create its resource;
   * null when another request claimed it first or it is gone.
   */
  claim(id: string, now: number, expiresAt: number): Promise<TusUploadRow | null>;
  /** Gives a claim up so that the upload can be finished again (an empty PATCH retries). */
  unclaim(id: string): Promise<void>;
  /**
   * The statements that go into the batch inserting the resource a claimed upload became, before
   * its charge: they spend the upload's reservation and record the resource, so either both
   * happen or neither. `applied`: a condition the batch's change must meet (a guarded update that
   * may change nothing); without it the upload stays claimed.
   */
  finishing(id: string, resourceUid: string, applied?: SQL): [BatchItem<"sqlite">, BatchItem<"sqlite">];
  /** Removes the upload (giving its reservation back) unless a request is finishing it; the row, or null. */
  terminate(id: string): Promise<TusUploadRow | null>;
  /** Removes an upload its finisher gave up (its content was refused), giving its reservation back. */
  abandon(id: string): Promise<TusUploadRow | null>;
  /** Removes the upload if it is expired at `now` (a claimed one only once its claim is abandoned). */
  expire(id: string, now: number): Promise<TusUploadRow | null>;
  /** Up to `limit` uploads `expire` would remove at `now`. */
  expired(now: number, limit: number): Promise<TusUploadRow[]>;
}

export const partsOf = (row: TusUploadRow): TusPart[] => JSON.parse(row.parts) as TusPart[];

/** `charge` builds the statement charging a tenant's usage (metadata-store's, shared by every write). */
export function createTusUploadStore(
  db: BatchSQLiteDatabase,
  charge: (c: UsageCharge) => BatchItem<"sqlite">,
): TusUploadStore {
  const one = (rows: TusUploadRow[]) => rows[0] ?? null;
  const expiredAt = (now: number) =>
    and(
      lte(tusUploads.expiresAt, now),
      or(ne(tusUploads.state, "finishing"), lte(tusUploads.expiresAt, now - FINISH_LEASE_MS)),
    ) as SQL;

  /** Gives back the bytes the upload `id` holds, if it matches `which` and is not finished. */
  const release = (id: string, which: SQL) => {
    const holding = and(eq(tusUploads.id, id), ne(tusUploads.state, "finished"), which);
    return db
      .update(tenantUsage)
      .set({ bytes: sql`${tenantUsage.bytes} - (select ${tusUploads.length} from ${tusUploads} where ${holding})` })
      .where(sql`${tenantUsage.tenantId} = (select ${tusUploads.tenantId} from ${tusUploads} where ${holding})`);
  };

  /** Removes the upload `id` if it matches `which`, with its reservation, in one transaction. */
  async function removeWhere(id: string, which: SQL): Promise<TusUploadRow | null> {
    const [, removed] = await db.batch([
      release(id, which),
      db
        .delete(tusUploads)
        .where(and(eq(tusUploads.id, id), which))
        .returning(),
    ]);
    return one(removed);
  }

  return {
    async create(row, reservation) {
      const [inserted] = await db.batch([db.insert(tusUploads).values(row).returning(), charge(reservation)]);
      return one(inserted) as TusUploadRow;
    },
    async find(id) {
      return one(await db.select().from(tusUploads).where(eq(tusUploads.id, id)).limit(1));
    },
    async unfinished(tenantId, now) {
      const [row] = await db
        .select({ n: count() })
        .from(tusUploads)
        .where(and(eq(tusUploads.tenantId, tenantId), ne(tusUploads.state, "finished"), gt(tusUploads.expiresAt, now)));
      return row?.n ?? 0;
    },
    async pending(now) {
      const [row] = await db
        .select({ n: count() })
        .from(tusUploads)
        .where(and(ne(tusUploads.state, "finished"), gt(tusUploads.expiresAt, now)));
      return row?.n ?? 0;
    },
    async advance(id, from, to, parts, now, expiresAt) {
      return one(
        await db
          .update(tusUploads)
          .set({ offset: to, parts: JSON.stringify(parts), expiresAt })
          .where(
            and(
              eq(tusUploads.id, id),
              eq(tusUploads.offset, from),
              eq(tusUploads.state, "pending"),
              gt(tusUploads.expiresAt, now),
            ),
          )
          .returning(),
      );
    },
    async claim(id, now, expiresAt) {
      return one(
        await db
          .update(tusUploads)
          .set({ state: "finishing", expiresAt })
          .where(
            and(
              eq(tusUploads.id, id),
              eq(tusUploads.state, "pending"),
              eq(tusUploads.offset, tusUploads.length),
              gt(tusUploads.expiresAt, now),
            ),
          )
          .returning(),
      );
    },
    async unclaim(id) {
      await db
        .update(tusUploads)
        .set({ state: "pending" })
        .where(and(eq(tusUploads.id, id), eq(tusUploads.state, "finishing")));
    },
    finishing(id, resourceUid, applied) {
      const claimed = applied
        ? (and(eq(tusUploads.state, "finishing"), applied) as SQL)
        : eq(tusUploads.state, "finishing");
      return [
        release(id, claimed),
        db
          .update(tusUploads)
          .set({ state: "finished", resourceUid, parts: "[]" })
          .where(and(eq(tusUploads.id, id), claimed)),
      ];
    },
    terminate: (id) => removeWhere(id, ne(tusUploads.state, "finishing")),
    abandon: (id) => removeWhere(id, eq(tusUploads.state, "finishing")),
    expire: (id, now) => removeWhere(id, expiredAt(now)),
    async expired(now, limit) {
      return db.select().from(tusUploads).where(expiredAt(now)).limit(limit);
    },
  };
}
