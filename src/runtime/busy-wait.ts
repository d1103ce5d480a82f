/**
 * Waiting for SQLite's write lock without freezing the process. @libsql/client runs a local file
 * synchronously on the main thread, so `busy_timeout` would sleep there: one write waiting for
 * another process's lock stalled every request (measured: /healthz, getData and listResources took
 * ≈ 4.7 s). Here connections never sleep (busy timeout 0): a write that meets the lock fails at
 * once with SQLITE_BUSY, waits on a timer, and is tried again — up to `maxWaitMs`, then
 * DatabaseBusyError (503). Reads never need the write lock in WAL mode.
 *
 * A statement that failed with SQLITE_BUSY is left un-reset by the driver until garbage collection,
 * and until then every COMMIT on that connection fails ("cannot commit transaction - SQL statements
 * in progress"). So the client that saw SQLITE_BUSY is retired (closed once idle) and a fresh one
 * takes over. While waiting, the lock is polled with `BEGIN IMMEDIATE; ROLLBACK` through `exec`,
 * which never leaves a statement behind, so polling costs microseconds and no new connections.
 */
import type { Client, InArgs, InStatement, ResultSet, TransactionMode } from "@libsql/client";
import Database from "libsql";
import { DatabaseBusyError, DatabaseFullError } from "../metadata/database-errors.js";
import { isReadOnly } from "./durable-commits.js";

/** SQLite result codes; extended codes carry the primary one in their low byte. */
const SQLITE_BUSY = 5;
const SQLITE_FULL = 13;
/** Poll delays grow from the first to the last, so a lock that lifts is noticed within ~50 ms. */
const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 50;

const primaryCode = (err: unknown): number | undefined => {
  const { code, rawCode } = (err ?? {}) as { code?: unknown; rawCode?: unknown };
  if (typeof rawCode === "number") return rawCode & 0xff;
  if (code === "SQLITE_BUSY") return SQLITE_BUSY;
  if (code === "SQLITE_FULL") return SQLITE_FULL;
  return undefined;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BusyWaitOptions {
  /** Opens a client on the database (one connection, busy timeout 0, its pragmas applied). */
  connect(): Promise<Client>;
  /** The database file, for the lock probe. */
  databaseFile: string;
  /** Longest a statement waits for the write lock before DatabaseBusyError. */
  maxWaitMs: number;
}

/** A Client over `connect()`'s clients that waits for the write lock asynchronously (see above). */
export async function withBusyWait(options: BusyWaitOptions): Promise<Client> {
  return new BusyWaitingClient(options, await options.connect());
}

class BusyWaitingClient implements Client {
  readonly protocol = "file";
  #current: Promise<Client>;
  #latest: Client;
  #inFlight = new Map<Client, number>();
  #retired = new Set<Client>();
  #probe: InstanceType<typeof Database>;

  constructor(
    readonly options: BusyWaitOptions,
    first: Client,
  ) {
    this.#current = Promise.resolve(first);
    this.#latest = first;
    this.#probe = new Database(options.databaseFile);
  }

  get closed() {
    return this.#latest.closed;
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  execute(stmt: InStatement | string, args?: InArgs) {
    const statement: InStatement = typeof stmt === "string" ? { sql: stmt, args: args ?? [] } : stmt;
    return this.#run((c) => c.execute(statement));
  }

  batch(stmts: Array<InStatement | [string, InArgs?]>, mode?: TransactionMode) {
    // A batch that writes takes the write lock at BEGIN, before doing any work: it then cannot fail
    // half-way with SQLITE_BUSY (or SQLITE_BUSY_SNAPSHOT, which waiting does not cure).
    const writes = stmts.some((s) => !isReadOnly(Array.isArray(s) ? s[0] : s));
    return this.#run((c) => c.batch(stmts, mode ?? (writes ? "write" : "deferred")));
  }

  migrate(stmts: InStatement[]) {
    return this.#run((c) => c.migrate(stmts));
  }

  executeMultiple(sql: string) {
    return this.#run((c) => c.executeMultiple(sql));
  }

  /** Interactive transactions are passed through without waiting (nothing in the service uses them: D1 has none). */
  async transaction(mode?: TransactionMode) {
    return (await this.#current).transaction(mode);
  }

  async sync() {
    return (await this.#current).sync();
  }

  reconnect() {
    this.#latest.reconnect();
  }

  close() {
    for (const client of [this.#latest, ...this.#retired]) client.close();
    this.#retired.clear();
    this.#probe.close();
  }

  async #run<T>(operation: (client: Client) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.options.maxWaitMs;
    for (;;) {
      const client = await this.#current;
      this.#inFlight.set(client, (this.#inFlight.get(client) ?? 0) + 1);
      try {
        return await operation(client);
      } catch (err) {
        const code = primaryCode(err);
        if (code === SQLITE_FULL) throw new DatabaseFullError({ cause: err });
        if (code !== SQLITE_BUSY) throw err;
        this.#retire(client);
        if (!(await this.#lockFreed(deadline))) throw new DatabaseBusyError(this.options.maxWaitMs, { cause: err });
      } finally {
        this.#release(client);
      }
    }
  }

  /** Replaces `client` (if it is still the current one) by a fresh connection; it closes once idle. */
  #retire(client: Client) {
    if (client !== this.#latest) return;
    this.#retired.add(client);
    this.#current = this.options.connect().then((fresh) => (this.#latest = fresh));
    // A failed connect is reported by the next operation (which awaits it); none is left unhandled.
    this.#current.catch(() => {});
  }

  #release(client: Client) {
    const left = (this.#inFlight.get(client) ?? 1) - 1;
    if (left > 0) return void this.#inFlight.set(client, left);
    this.#inFlight.delete(client);
    if (this.#retired.delete(client)) client.close();
  }

  /** Polls until the write lock is free (true) or `deadline` passes (false), sleeping between polls. */
  async #lockFreed(deadline: number): Promise<boolean> {
    for (let delay = FIRST_POLL_MS; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      if (this.#writeLockFree()) return true;
    }
  }

  #writeLockFree(): boolean {
    try {
      this.#probe.exec("BEGIN IMMEDIATE");
      this.#probe.exec("ROLLBACK");
      return true;
    } catch (err) {
      if (primaryCode(err) === SQLITE_BUSY) return false;
      throw err;
    }
  }
}
