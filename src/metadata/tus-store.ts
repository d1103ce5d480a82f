/**
 * TusUploadStore: resumable uploads as rows of the metadata database, so they survive restarts and
 * are shared by instances. Progress is one compare-and-set on the offset: of two PATCHes racing at
 * the same offset, exactly one advances it.
 */
import { and, eq, isNull, lte } from "drizzle-orm";
import type { AnySQLiteDatabase } from "./store-types.js";
import { type NewTusUploadRow, type TusUploadRow, tusUploads } from "./schema.js";

export interface TusPart {
  key: string;
  size: number;
}

export interface TusUploadStore {
  create(row: NewTusUploadRow): Promise<TusUploadRow>;
  find(id: string): Promise<TusUploadRow | null>;
  /** Moves the offset from `from` to `to` with `parts`, only if it still is `from`; null otherwise. */
  advance(id: string, from: number, to: number, parts: TusPart[], expiresAt: number): Promise<TusUploadRow | null>;
  /** Records the resource a finished upload became (once); null if another request already did. */
  finish(id: string, resourceUid: string): Promise<TusUploadRow | null>;
  /** Removes the row; returns it, or null if it was already gone. */
  remove(id: string): Promise<TusUploadRow | null>;
  /** Up to `limit` uploads whose expiry has passed. */
  expired(now: number, limit: number): Promise<TusUploadRow[]>;
}

export const partsOf = (row: TusUploadRow): TusPart[] => JSON.parse(row.parts) as TusPart[];

export function createTusUploadStore(db: AnySQLiteDatabase): TusUploadStore {
  const one = (rows: TusUploadRow[]) => rows[0] ?? null;
  return {
    async create(row) {
      return one(await db.insert(tusUploads).values(row).returning()) as TusUploadRow;
    },
    async find(id) {
      return one(await db.select().from(tusUploads).where(eq(tusUploads.id, id)).limit(1));
    },
    async advance(id, from, to, parts, expiresAt) {
      return one(
        await db
          .update(tusUploads)
          .set({ offset: to, parts: JSON.stringify(parts), expiresAt })
          .where(and(eq(tusUploads.id, id), eq(tusUploads.offset, from), isNull(tusUploads.resourceUid)))
          .returning(),
      );
    },
    async finish(id, resourceUid) {
      return one(
        await db
          .update(tusUploads)
          .set({ resourceUid, parts: "[]" })
          .where(and(eq(tusUploads.id, id), isNull(tusUploads.resourceUid)))
          .returning(),
      );
    },
    async remove(id) {
      return one(await db.delete(tusUploads).where(eq(tusUploads.id, id)).returning());
    },
    async expired(now, limit) {
      return db.select().from(tusUploads).where(lte(tusUploads.expiresAt, now)).limit(limit);
    },
  };
}
