/**
 * The metadata database's availability as this process sees it, judged from the outcome of every
 * statement. A failure that says the database cannot be used (`isDatabaseUnavailable`) becomes
 * DatabaseUnavailableError (503 DATABASE_UNAVAILABLE + Retry-After) and starts an outage; the next
 * statement that succeeds ends it. Each outage is logged once when it starts and once when it ends,
 * however many requests meet it. A read that succeeds does not end an outage a write met: a volume
 * that refuses writes still serves reads, and counting them would log a recovery per request; nor
 * does a write that changed no row, which SQLite commits without writing, nor a statement sent
 * before the outage began (an answer the database gave before it went away, read late under load).
 * Nothing is polled: the service recovers with the first request the database answers. Web APIs only.
 */
import type { Client, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import type { Logger } from "../lib/logger.js";
import { proxyWith } from "../lib/proxy-with.js";
import { DatabaseUnavailableError, isDatabaseUnavailable, rootMessage } from "./database-errors.js";

export type StatementKind = "read" | "write";

export interface DatabaseHealth {
  /** `err` as callers should see it: DatabaseUnavailableError when the database cannot be used, else `err` unchanged. */
  failed(err: unknown, kind: StatementKind): unknown;
  /** Called as a statement is sent: what `succeeded` is then given as `sentAt`. */
  sending(): number;
  /** A statement of `kind`, sent when `sending` answered `sentAt` (default: now), succeeded. */
  succeeded(kind: StatementKind, sentAt?: number): void;
}

export function createDatabaseHealth(logger: Logger, now: () => number = Date.now): DatabaseHealth {
  let outage: { since: number; writes: boolean; failures: number } | null = null;
  let outagesStarted = 0;
  return {
    sending: () => outagesStarted,
    failed(err, kind) {
      if (!isDatabaseUnavailable(err)) return err;
      if (!outage) {
        outagesStarted++;
        outage = { since: now(), writes: kind === "write", failures: 1 };
        // The driver's message names what failed (host and port, "disk I/O error"); never the statement.
        logger.error("database unavailable", { detail: rootMessage(err), statement: kind });
      } else {
        outage.failures++;
        if (kind === "write") outage.writes = true;
      }
      return err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError({ cause: err });
    },
    succeeded(kind, sentAt = outagesStarted) {
      if (!outage || sentAt < outagesStarted || (outage.writes && kind === "read")) return;
      logger.warn("database available again", { downMs: now() - outage.since, failedStatements: outage.failures });
      outage = null;
    },
  };
}

const READ_ONLY = /^\s*(select|pragma\s+\w+\s*;?\s*$|explain)/i;
const sqlOf = (statement: InStatement | [string, unknown?]) =>
  typeof statement === "string" ? statement : Array.isArray(statement) ? statement[0] : statement.sql;
/** Whether a statement only reads (a SELECT, a pragma query, EXPLAIN): it needs no write lock and no sync. */
export const isReadOnly = (statement: InStatement | [string, unknown?]) => READ_ONLY.test(sqlOf(statement));

/**
 * The client, with every statement's outcome reported to `health` and an unusable database's error
 * turned into DatabaseUnavailableError. Interactive transactions pass through unwatched (nothing in
 * the service uses them: D1 has none).
 */
/**
 * Whether a write's result shows it changed a row. One that changed none (a background pass's claim
 * with nothing due) wrote no page: SQLite commits it even on a volume that refuses writes, so it
 * proves only that the database reads. Results without counts (migrate, executeMultiple) count.
 */
const wroteSomething = (result: unknown): boolean => {
  const results = Array.isArray(result) ? (result as unknown[]) : [result];
  return results.some((r) => {
    const affected = (r as Partial<ResultSet> | undefined)?.rowsAffected;
    return typeof affected !== "number" || affected > 0;
  });
};

export function withDatabaseHealth(client: Client, health: DatabaseHealth): Client {
  const watch = <T>(kind: StatementKind, send: () => Promise<T>): Promise<T> => {
    const sentAt = health.sending();
    return send().then(
      (value) => {
        health.succeeded(kind === "write" && !wroteSomething(value) ? "read" : kind, sentAt);
        return value;
      },
      (err: unknown) => {
        throw health.failed(err, kind);
      },
    );
  };
  const call =
    (name: "execute" | "batch" | "migrate" | "executeMultiple", kind: (args: unknown[]) => StatementKind) =>
    (...args: unknown[]) =>
      watch(kind(args), () => (client[name] as (...a: unknown[]) => Promise<unknown>).apply(client, args));
  const watched: Partial<Record<PropertyKey, unknown>> = {
    execute: call("execute", ([stmt]) => (isReadOnly(stmt as InStatement) ? "read" : "write")),
    batch: (stmts: InStatement[], mode?: TransactionMode) => {
      const kind = stmts.every(isReadOnly) ? "read" : "write";
      // A batch that writes takes the write lock when it begins (BEGIN IMMEDIATE), so it waits its turn
      // behind another instance's writer. Deferred (libSQL's default, which drizzle's batch keeps) it
      // would start as a reader and fail at once with SQLITE_BUSY when a commit lands before its first
      // write: seen on sqld with two instances creating at once (test/multi/two-instances.test.ts).
      return watch(kind, () => client.batch(stmts, mode ?? (kind === "write" ? "write" : "deferred")));
    },
    migrate: call("migrate", () => "write"),
    executeMultiple: call("executeMultiple", () => "write"),
  };
  return proxyWith(client, watched);
}
