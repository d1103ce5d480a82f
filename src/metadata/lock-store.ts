/**
 * LockStore: locks as rows of the metadata database, so they hold across processes and restarts.
 * Each operation is one compare-and-set statement; a lock whose `expiresAt` has passed is free and is
 * overwritten by the next acquire (no reaper needed, and an abandoned lock can never block for ever).
 */
import { and, eq, gt, lte, sql } from "drizzle-orm";
import type { BatchSQLiteDatabase, LockProof } from "./store-types.js";
import { type LockRow, locks, resources } from "./schema.js";
import { recordEvents } from "./webhook-store.js";

export interface NewLock extends LockProof {
  name: string;
  expiresAt: number;
  now: number;
}

export type AcquireResult = { acquired: true; lock: LockRow } | { acquired: false; held: LockRow };

export interface LockStore {
  /** Takes the lock unless a live one exists (then `held` is that lock). */
  acquire(lock: NewLock): Promise<AcquireResult>;
  /** Moves the expiry of a live lock matching the proof; null when there is none. */
  renew(name: string, proof: LockProof, expiresAt: number, now: number): Promise<LockRow | null>;
  /** Removes the lock if it matches the proof (expired or not), or any lock on `name` when `proof` is null (admin). */
  release(name: string, proof: LockProof | null, now?: number): Promise<LockRow | null>;
  /** The live lock on `name`, or null. */
  find(name: string, now: number): Promise<LockRow | null>;
}

const matches = (name: string, proof: LockProof) =>
  and(
    eq(locks.name, name),
    eq(locks.lockId, proof.lockId),
    eq(locks.owner, proof.owner),
    sql`${locks.holder} is ${proof.holder}`,
  );

export function createLockStore(db: BatchSQLiteDatabase): LockStore {
  const find = async (name: string, now: number) => {
    const [row] = await db
      .select()
      .from(locks)
      .where(and(eq(locks.name, name), gt(locks.expiresAt, now)))
      .limit(1);
    return row ?? null;
  };

  return {
    async acquire(lock) {
      const { now, ...values } = lock;
      // A live lock can vanish between our failed insert and the read that reports it (released or
      // expired meanwhile); then simply try again.
      for (let attempt = 0; attempt < 3; attempt++) {
        // resource.locked in the same batch, only if this acquire took the lock (and it names a resource).
        const tookIt = sql`${resources.uid} = ${values.name} and exists (select 1 from ${locks} where ${locks.name} = ${values.name} and ${locks.lockId} = ${values.lockId} and ${locks.createdAt} = ${now})`;
        const [[taken]] = await db.batch([
          db
            .insert(locks)
            .values({ ...values, createdAt: now })
            .onConflictDoUpdate({
              target: locks.name,
              set: {
                lockId: values.lockId,
                owner: values.owner,
                holder: values.holder,
                expiresAt: values.expiresAt,
                createdAt: now,
              },
              setWhere: lte(locks.expiresAt, now),
            })
            .returning(),
          recordEvents(db, "resource.locked", tookIt, values.holder, now),
        ]);
        if (taken) return { acquired: true, lock: taken };
        const held = await find(lock.name, now);
        if (held) return { acquired: false, held };
      }
      throw new Error(`lock ${lock.name} kept changing while being acquired`);
    },

    async renew(name, proof, expiresAt, now) {
      const [row] = await db
        .update(locks)
        .set({ expiresAt })
        .where(and(matches(name, proof), gt(locks.expiresAt, now)))
        .returning();
      return row ?? null;
    },

    async release(name, proof, now = Date.now()) {
      const which = proof ? matches(name, proof) : eq(locks.name, name);
      // resource.unlocked before the delete, in its batch: only if there is such a lock on a resource.
      const releases = sql`${resources.uid} = ${name} and exists (select 1 from ${locks} where ${which})`;
      const [, [row]] = await db.batch([
        recordEvents(db, "resource.unlocked", releases, proof?.holder ?? null, now),
        db.delete(locks).where(which).returning(),
      ]);
      return row ?? null;
    },

    find,
  };
}
