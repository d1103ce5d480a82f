/** Types shared by the metadata stores (their own module so the stores import no one another in a cycle). */
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
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

/** libSQL's and D1's drizzle databases both have `batch` (one transaction); the base type does not. */
export type BatchSQLiteDatabase = AnySQLiteDatabase & {
  batch<T extends [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]>(queries: T): Promise<BatchResponse<T>>;
};

/**
 * What a write adds to its tenant's usage, and the limits it must stay within (0 = none). Charged in
 * the write's own batch: a CHECK constraint of `tenant_usage` fails the whole batch when over a limit,
 * with the constraint's name (`quota_bytes`, `quota_resources`, `quota_ingress`) in the error.
 */
export interface UsageCharge {
  tenantId: string;
  bytes: number;
  resources: number;
  ingressBytes: number;
  /** UTC day number of the write (epoch ms / 86 400 000). */
  day: number;
  limits: { bytes: number; resources: number; ingressBytesPerDay: number };
}
