/**
 * DerivativeStore: the image derivative cache's index (schema.ts `imageDerivatives`): what is stored
 * under `img/`, how big, and when last used, for eviction least recently used first
 * (images/derivative-index.ts). Every statement is one index lookup or range.
 */
import { and, asc, gte, inArray, lt, sql } from "drizzle-orm";
import { imageDerivatives } from "./schema.js";
import type { AnySQLiteDatabase } from "./store-types.js";

export interface DerivativeStore {
  /** `key` (of `size` bytes) was used at `now`: recorded, or its last use moved on. */
  used(key: string, size: number, now: number): Promise<void>;
  /** Bytes the recorded derivatives hold. */
  totalBytes(): Promise<number>;
  /** The `limit` least recently used, oldest first. */
  oldest(limit: number): Promise<{ key: string; size: number; lastUsedAt: number }[]>;
  forget(keys: readonly string[]): Promise<void>;
  /** Forgets every derivative under `prefix` (their source was purged). */
  forgetUnder(prefix: string): Promise<void>;
}

export function createDerivativeStore(db: AnySQLiteDatabase): DerivativeStore {
  const d = imageDerivatives;
  return {
    async used(key, size, now) {
      await db
        .insert(d)
        .values({ key, size, lastUsedAt: now })
        .onConflictDoUpdate({ target: d.key, set: { size, lastUsedAt: sql`max(${d.lastUsedAt}, ${now})` } });
    },
    async totalBytes() {
      const [row] = await db.select({ n: sql<number>`coalesce(sum(${d.size}), 0)` }).from(d);
      return Number(row?.n ?? 0);
    },
    oldest: (limit) => db.select().from(d).orderBy(asc(d.lastUsedAt), asc(d.key)).limit(limit),
    async forget(keys) {
      if (keys.length > 0) await db.delete(d).where(inArray(d.key, [...keys]));
    },
    async forgetUnder(prefix) {
      // A key range on the primary key: every key starting with `prefix` (which ends in "/"; "0" follows "/").
      const end = `${prefix.slice(0, -1)}0`;
      await db.delete(d).where(and(gte(d.key, prefix), lt(d.key, end)));
    },
  };
}
