/** Types shared by the metadata stores (their own module so the stores import no one another in a cycle). */
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";

/** Proof that the caller holds a lock: all three must match a live row of `locks`. */
export interface LockProof {
  lockId: string;
  owner: string;
  /** principal.ts `holderOf`, or null when auth is off (matched with SQL `IS`, so null equals null). */
  holder: string | null;
}

// biome-ignore lint/suspicious/noExplicitAny: drizzle's result type differs per driver (libSQL ResultSet, D1Result); we never read it.
export type AnySQLiteDatabase = BaseSQLiteDatabase<"async", any, Record<string, unknown>>;
