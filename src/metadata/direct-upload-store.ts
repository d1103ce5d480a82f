/**
 * DirectUploadStore: uploads by signed URL (docs/direct-storage.md) as rows, so they survive restarts
 * and are shared by instances. As for tus uploads (tus-store.ts), every change is one statement or
 * one batch whose conditions decide it: of two completions racing exactly one claims the upload; an
 * expiry never removes one a request is completing. A pending upload holds its `size` in its
 * tenant's `tenant_usage.bytes` until it is completed (spent in the resource's batch) or removed.
 */
import { and, eq, lte, ne, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type DirectUploadRow, directUploads, type NewDirectUploadRow, tenantUsage } from "./schema.js";
import type { BatchSQLiteDatabase, UsageCharge } from "./store-types.js";
import { FINISH_LEASE_MS } from "./tus-store.js";

export interface DirectUploadStore {
  /** Inserts the upload and charges `reservation` (its size) in one batch; rejects like any charge when it does not fit. */
  create(row: NewDirectUploadRow, reservation: UsageCharge): Promise<DirectUploadRow>;
  find(id: string): Promise<DirectUploadRow | null>;
  /** Claims a pending, unexpired upload for the one request completing it; null when another was first or it is gone. */
  claim(id: string, now: number): Promise<DirectUploadRow | null>;
  /** Gives a claim up (the completion failed for a reason worth retrying). */
  unclaim(id: string): Promise<void>;
  /** The statements in the resource's batch that spend the reservation and record the resource. */
  finishing(id: string, resourceUid: string): [BatchItem<"sqlite">, BatchItem<"sqlite">];
  /** Removes a claimed upload whose bytes were refused, giving its reservation back. */
  abandon(id: string): Promise<DirectUploadRow | null>;
  /** Removes the upload if it expired at `now` (a claimed one only once its claim is abandoned). */
  expire(id: string, now: number): Promise<DirectUploadRow | null>;
  /** Up to `limit` uploads `expire` would remove at `now`. */
  expired(now: number, limit: number): Promise<DirectUploadRow[]>;
}

export function createDirectUploadStore(
  db: BatchSQLiteDatabase,
  charge: (c: UsageCharge) => BatchItem<"sqlite">,
): DirectUploadStore {
  const one = (rows: DirectUploadRow[]) => rows[0] ?? null;
  const expiredAt = (now: number) =>
    and(
      lte(directUploads.expiresAt, now),
      or(ne(directUploads.state, "completing"), lte(directUploads.expiresAt, now - FINISH_LEASE_MS)),
    ) as SQL;

  /** Gives back the bytes the upload `id` holds, if it matches `which` and is not completed. */
  const release = (id: string, which: SQL) => {
    const holding = and(eq(directUploads.id, id), ne(directUploads.state, "completed"), which);
    return db
      .update(tenantUsage)
      .set({ bytes: sql`${tenantUsage.bytes} - (select ${directUploads.size} from ${directUploads} where ${holding})` })
      .where(sql`${tenantUsage.tenantId} = (select ${directUploads.tenantId} from ${directUploads} where ${holding})`);
  };

  async function removeWhere(id: string, which: SQL): Promise<DirectUploadRow | null> {
    const [, removed] = await db.batch([
      release(id, which),
      db
        .delete(directUploads)
        .where(and(eq(directUploads.id, id), which))
        .returning(),
    ]);
    return one(removed);
  }

  return {
    async create(row, reservation) {
      const [inserted] = await db.batch([db.insert(directUploads).values(row).returning(), charge(reservation)]);
      return one(inserted) as DirectUploadRow;
    },
    async find(id) {
      return one(await db.select().from(directUploads).where(eq(directUploads.id, id)).limit(1));
    },
    async claim(id, now) {
      return one(
        await db
          .update(directUploads)
          .set({ state: "completing" })
          .where(
            and(eq(directUploads.id, id), eq(directUploads.state, "pending"), sql`${directUploads.expiresAt} > ${now}`),
          )
          .returning(),
      );
    },
    async unclaim(id) {
      await db
        .update(directUploads)
        .set({ state: "pending" })
        .where(and(eq(directUploads.id, id), eq(directUploads.state, "completing")));
    },
    finishing(id, resourceUid) {
      const claimed = eq(directUploads.state, "completing");
      return [
        release(id, claimed),
        db
          .update(directUploads)
          .set({ state: "completed", resourceUid })
          .where(and(eq(directUploads.id, id), claimed)),
      ];
    },
    abandon: (id) => removeWhere(id, eq(directUploads.state, "completing")),
    expire: (id, now) => removeWhere(id, expiredAt(now)),
    async expired(now, limit) {
      return db.select().from(directUploads).where(expiredAt(now)).limit(limit);
    },
  };
}
