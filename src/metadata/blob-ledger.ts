/**
 * The blob ledger's statements (table `blob_ledger`, see schema.ts). Each is one statement, so every
 * decision — reserve, doom, forget — is taken under the database's own serialisation, by any number
 * of instances sharing the database (libSQL or D1).
 */
import { and, asc, eq, inArray, is, isNotNull, isNull, lt, lte, or, Placeholder, sql, type SQL } from "drizzle-orm";
import { prebuilt } from "./prebuilt.js";
import type { AnySQLiteDatabase } from "./store-types.js";
import { blobLedger, resources, revisions } from "./schema.js";

export interface BlobLedger {
  /**
   * Records that a create is about to rely on `key` (before it checks whether the blob exists).
   * Returns null when reserved, or the `doomedAt` of a collector deleting the blob right now.
   */
  reserve(key: string, now: number, graceMs: number): Promise<number | null>;
  /** Gives up one reservation (the create failed); the collector looks at the blob at once. */
  release(key: string, now: number): Promise<void>;
  /**
   * Claims `key` for deletion if no row references it and no live reservation awaits it (none, or
   * the last older than `abandonedBefore`). True when claimed: the caller deletes the blob, then `forget`s.
   */
  doom(key: string, now: number, abandonedBefore: number): Promise<boolean>;
  /** Re-claims a deletion whose collector stopped (doomed at `doomedAt`); true when this caller now owns it. */
  redoom(key: string, doomedAt: number, now: number): Promise<boolean>;
  /** Drops the ledger row of a blob its collector (doomed at `doomedAt`) has deleted. */
  forget(key: string, doomedAt: number): Promise<void>;
  /** After a failed `doom`: when to look again (never while referenced; when the reservation lapses). */
  postpone(key: string, graceMs: number): Promise<void>;
  /** Keys due for a look (`check_after` passed), oldest first. */
  due(now: number, limit: number): Promise<string[]>;
  /** Deletions claimed before `before` and never finished (their collector died). */
  staleDooms(before: number, limit: number): Promise<{ key: string; doomedAt: number }[]>;
  /**
   * The keys of `keys` this database has no record of (no ledger row). Only reported, never
   * collected: a blob this database did not record may be another deployment's (services/store-owner.ts).
   */
  unknown(keys: string[]): Promise<string[]>;
  /** The current state of a key (tests and diagnostics). */
  find(key: string): Promise<{ pending: number; doomedAt: number | null } | null>;
}

/** Whether a statement failed because a row's blob was not reserved (the triggers of migration 0002). */
export function isBlobNotReserved(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message.includes("BLOB_NOT_RESERVED")) return true;
  }
  return false;
}

/**
 * Rows a write changed: libSQL reports `rowsAffected`, D1 `meta.changes`. Writes here never use
 * RETURNING: a libSQL statement that returns rows and fails with SQLITE_BUSY while they are read is
 * left un-reset, and every later commit on that connection fails ("SQL statements in progress").
 */
function changes(result: unknown): number {
  const r = result as { rowsAffected?: number; meta?: { changes?: number } };
  return r.rowsAffected ?? r.meta?.changes ?? 0;
}

/** D1 binds at most 100 parameters per statement: 90 keys per lookup. */
const KEYS_PER_STATEMENT = 90;

export const referenced = (key: SQL | string) =>
  sql`(exists (select 1 from ${resources} where ${resources.blobKey} = ${key}) or exists (select 1 from ${revisions} where ${revisions.blobKey} = ${key}))`;

/** The ledger row's key, qualified: inside json_each() or a subquery a bare `key` means another column. */
const LEDGER_KEY = sql.raw('"blob_ledger"."key"');

/**
 * The statement a row insert or content update batches with itself: releases one reservation per
 * entry of `keys` (the rows just written reference them, so the collector has nothing to look at).
 * One statement whatever the number of keys: they travel as one JSON parameter.
 */
export function consumeReservations(
  db: AnySQLiteDatabase,
  keys: readonly string[] | Placeholder,
  now: number | Placeholder,
  when?: SQL,
) {
  // A placeholder (a prebuilt statement, prebuilt.ts) stands for the JSON list itself.
  const list = is(keys, Placeholder) ? keys : JSON.stringify(keys);
  return db
    .update(blobLedger)
    .set({
      pending: sql`max(${blobLedger.pending} - (select count(*) from json_each(${list}) where value = ${LEDGER_KEY}), 0)`,
      touchedAt: sql`${now}`,
      checkAfter: null,
    })
    .where(and(sql`${LEDGER_KEY} in (select value from json_each(${list}))`, isNull(blobLedger.doomedAt), when));
}

export function createBlobLedger(db: AnySQLiteDatabase): BlobLedger {
  // Every create reserves: built once (prebuilt.ts).
  const at = { now: sql.placeholder("now"), checkAfter: sql.placeholder("checkAfter") };
  const reservation = prebuilt<{ key: string; now: number; checkAfter: number }>(
    db,
    db
      .insert(blobLedger)
      .values({ key: sql.placeholder("key"), pending: 1, touchedAt: at.now, checkAfter: at.checkAfter })
      .onConflictDoUpdate({
        target: blobLedger.key,
        set: { pending: sql`${blobLedger.pending} + 1`, touchedAt: sql`${at.now}`, checkAfter: sql`${at.checkAfter}` },
        setWhere: isNull(blobLedger.doomedAt),
      }),
  );
  return {
    async reserve(key, now, graceMs) {
      const reserved = await reservation({ key, now, checkAfter: now + graceMs });
      if (changes(reserved) > 0) return null;
      const [row] = await db.select({ doomedAt: blobLedger.doomedAt }).from(blobLedger).where(eq(blobLedger.key, key));
      // Gone between the two statements: the deletion just finished; the caller retries.
      return row?.doomedAt ?? 0;
    },

    async release(key, now) {
      await db
        .update(blobLedger)
        .set({ pending: sql`max(${blobLedger.pending} - 1, 0)`, checkAfter: now })
        .where(and(eq(blobLedger.key, key), isNull(blobLedger.doomedAt)));
    },

    async doom(key, now, abandonedBefore) {
      const claimed = await db
        .update(blobLedger)
        .set({ doomedAt: now })
        .where(
          and(
            eq(blobLedger.key, key),
            isNull(blobLedger.doomedAt),
            or(eq(blobLedger.pending, 0), lt(blobLedger.touchedAt, abandonedBefore)),
            sql`not ${referenced(LEDGER_KEY)}`,
          ),
        )
        .run();
      return changes(claimed) > 0;
    },

    async redoom(key, doomedAt, now) {
      const claimed = await db
        .update(blobLedger)
        .set({ doomedAt: now })
        .where(and(eq(blobLedger.key, key), eq(blobLedger.doomedAt, doomedAt)))
        .run();
      return changes(claimed) > 0;
    },

    async forget(key, doomedAt) {
      await db.delete(blobLedger).where(and(eq(blobLedger.key, key), eq(blobLedger.doomedAt, doomedAt)));
    },

    async postpone(key, graceMs) {
      await db
        .update(blobLedger)
        .set({
          checkAfter: sql`case when ${referenced(LEDGER_KEY)} then null else ${blobLedger.touchedAt} + ${graceMs} end`,
        })
        .where(and(eq(blobLedger.key, key), isNull(blobLedger.doomedAt)));
    },

    async due(now, limit) {
      const rows = await db
        .select({ key: blobLedger.key })
        .from(blobLedger)
        .where(and(lte(blobLedger.checkAfter, now), isNull(blobLedger.doomedAt)))
        .orderBy(asc(blobLedger.checkAfter))
        .limit(limit);
      return rows.map((r) => r.key);
    },

    async staleDooms(before, limit) {
      const rows = await db
        .select({ key: blobLedger.key, doomedAt: blobLedger.doomedAt })
        .from(blobLedger)
        .where(and(isNotNull(blobLedger.doomedAt), lt(blobLedger.doomedAt, before)))
        .limit(limit);
      return rows.map((r) => ({ key: r.key, doomedAt: r.doomedAt as number }));
    },

    async unknown(keys) {
      const strangers: string[] = [];
      for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
        const chunk = keys.slice(i, i + KEYS_PER_STATEMENT);
        const known = await db.select({ key: blobLedger.key }).from(blobLedger).where(inArray(blobLedger.key, chunk));
        const knownKeys = new Set(known.map((r) => r.key));
        strangers.push(...chunk.filter((k) => !knownKeys.has(k)));
      }
      return strangers;
    },

    async find(key) {
      const [row] = await db
        .select({ pending: blobLedger.pending, doomedAt: blobLedger.doomedAt })
        .from(blobLedger)
        .where(eq(blobLedger.key, key));
      return row ?? null;
    },
  };
}
