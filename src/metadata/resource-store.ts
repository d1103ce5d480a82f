/**
 * ResourceStore: the metadata operations the services need, implemented once with drizzle over any
 * async SQLite dialect (libSQL on Node/Bun, D1 on Workers). The only module that builds queries.
 */
import { count, eq } from "drizzle-orm";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { type NewResourceRow, type ResourceRow, resources } from "./schema.js";

export interface ResourceStore {
  insert(row: NewResourceRow): Promise<ResourceRow>;
  findByUid(uid: string): Promise<ResourceRow | null>;
  /** How many rows point at a blob, so a blob is removed only when nothing references it. */
  countByBlobKey(blobKey: string): Promise<number>;
  /** Throws if the database cannot be queried (readiness). */
  ping(): Promise<void>;
}

// biome-ignore lint: drizzle's result type differs per driver (libSQL ResultSet, D1Result); we never read it.
export type AnySQLiteDatabase = BaseSQLiteDatabase<"async", any, Record<string, unknown>>;

export function createResourceStore(db: AnySQLiteDatabase): ResourceStore {
  return {
    async insert(row) {
      const [inserted] = await db.insert(resources).values(row).returning();
      if (!inserted) throw new Error("insert returned no row");
      return inserted;
    },
    async findByUid(uid) {
      const [row] = await db.select().from(resources).where(eq(resources.uid, uid)).limit(1);
      return row ?? null;
    },
    async countByBlobKey(blobKey) {
      const [result] = await db.select({ n: count() }).from(resources).where(eq(resources.blobKey, blobKey));
      return result?.n ?? 0;
    },
    async ping() {
      await db.select({ n: count() }).from(resources).limit(1);
    },
  };
}
