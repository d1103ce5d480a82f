/**
 * The libSQL `Client` for a local database file (Node/Bun): one `libsql` connection whose writes
 * wait for SQLite's write lock on timers, never on the main thread.
 *
 * Why not @libsql/client's own `file:` driver: it runs synchronously on the main thread, so
 * `busy_timeout` slept there — one write waiting for another process's lock stalled every request
 * (measured: /healthz, getData, listResources ≈ 4.7 s). And a statement that failed with SQLITE_BUSY
 * stays un-reset until garbage collection: until then every COMMIT on that connection failed
 * ("cannot commit transaction - SQL statements in progress"), and closing such a connection leaks it.
 *
 * Here the busy timeout is 0 and every write takes the lock first with `BEGIN IMMEDIATE` through
 * `exec` (which finalises its statement even when it fails): on SQLITE_BUSY nothing is left behind,
 * the write sleeps on a timer (2 ms, doubling to 50 ms) and tries again, up to `maxWaitMs`, then
 * DatabaseBusyError. Once the lock is held its statements cannot meet SQLITE_BUSY. Reads need no
 * lock in WAL mode. All work between BEGIN and COMMIT is synchronous, so the one connection is never
 * shared by two transactions. Interactive transactions are not offered (D1 has none; nothing uses them).
 */
import type { Client, InArgs, InStatement, InValue, ResultSet, Row, TransactionMode } from "@libsql/client";
import Database from "libsql";
import { retryWhileBusy } from "../../metadata/busy-retry.js";
import { DatabaseFullError } from "../../metadata/database-errors.js";
import { isReadOnly } from "../../metadata/database-health.js";

type Connection = InstanceType<typeof Database>;
type Prepared = ReturnType<Connection["prepare"]>;
/** What a prepared statement returns: asked of SQLite once per statement, not per run (two native calls each). */
type Shape = { reader: boolean; columns: string[]; columnTypes: string[] };
type Statement = { sql: string; args: InArgs };

/**
 * Prepared statements kept per connection, by SQL text. The app's statements are a small fixed set
 * (drizzle binds values as parameters); the bound keeps ad-hoc SQL (multi-row inserts of any
 * length, the CLI) from growing it. Preparing every run was 3.8 % of an ingest's CPU profile, 1.3 %
 * with the cache; an insert and a select by id took 274–349 µs reused, 346–372 µs prepared anew.
 */
const PREPARED_STATEMENTS = 64;

/** A `*` that may stand for every column (`select *`, `t.*`); not `count(*)`. Errs on the side of "may". */
const MAY_SELECT_ALL_COLUMNS = /\*(?!\))/;

/** SQLite primary result codes (extended codes carry them in their low byte). */
const SQLITE_BUSY = 5;
const SQLITE_FULL = 13;
/** `PRAGMA name = value`: a setting, applied to the connection rather than in a transaction. */
const PRAGMA_ASSIGNMENT = /^\s*pragma\s+(\w+)\s*=/i;

const primaryCode = (err: unknown) => {
  const { rawCode } = (err ?? {}) as { rawCode?: unknown };
  return typeof rawCode === "number" ? rawCode & 0xff : undefined;
};
const isBusy = (err: unknown) => primaryCode(err) === SQLITE_BUSY;
/** A full disk becomes DatabaseFullError (507); anything else stays as it is. */
const asCondition = (err: unknown) => (primaryCode(err) === SQLITE_FULL ? new DatabaseFullError({ cause: err }) : err);

export interface SqliteFileOptions {
  /** Path of the database file. */
  file: string;
  /** Longest a statement waits for the write lock before DatabaseBusyError. */
  maxWaitMs: number;
}

export function createSqliteFileClient(options: SqliteFileOptions): Client {
  return new SqliteFileClient(options);
}

class SqliteFileClient implements Client {
  readonly protocol = "file";
  closed = false;
  readonly #db: Connection;
  readonly #maxWaitMs: number;
  readonly #prepared = new Map<string, { stmt: Prepared; shape: Shape }>();

  constructor({ file, maxWaitMs }: SqliteFileOptions) {
    this.#db = new Database(file); // busy timeout 0 (the default): a locked database answers SQLITE_BUSY at once
    this.#maxWaitMs = maxWaitMs;
  }

  /** The statement for `sql`, prepared once and reused (least recently used dropped beyond the bound). */
  #prepare(sql: string): { stmt: Prepared; shape: Shape } {
    let prepared = this.#prepared.get(sql);
    if (prepared) {
      this.#prepared.delete(sql); // re-inserted below: Map order is recency
    } else {
      const stmt = this.#db.prepare(sql);
      stmt.safeIntegers(true);
      const reader = stmt.reader;
      if (reader) stmt.raw(true);
      const described = reader ? (stmt.columns() as { name: string; type: string | null }[]) : [];
      prepared = {
        stmt,
        shape: { reader, columns: described.map((c) => c.name), columnTypes: described.map((c) => c.type ?? "") },
      };
      // A reused `select *` keeps the columns it was prepared with across a schema change (tested):
      // only statements that name their columns (all of drizzle's) are kept. `count(*)` names none.
      if (MAY_SELECT_ALL_COLUMNS.test(sql)) return prepared;
      if (this.#prepared.size >= PREPARED_STATEMENTS)
        this.#prepared.delete(this.#prepared.keys().next().value as string);
    }
    this.#prepared.set(sql, prepared);
    return prepared;
  }

  /** Runs one statement; one that failed is dropped (it may be left un-reset) and prepared afresh next time. */
  #run(statement: Statement): ResultSet {
    try {
      const { stmt, shape } = this.#prepare(statement.sql);
      return runStatement(stmt, shape, statement.args);
    } catch (err) {
      this.#prepared.delete(statement.sql);
      throw err;
    }
  }

  execute(stmt: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  async execute(stmt: InStatement | string, args?: InArgs): Promise<ResultSet> {
    const statement = toStatement(typeof stmt === "string" ? { sql: stmt, args: args ?? [] } : stmt);
    if (isReadOnly(statement)) return this.#retrying(() => this.#run(statement));
    const setting = PRAGMA_ASSIGNMENT.exec(statement.sql);
    if (setting) {
      // Outside any transaction (journal_mode cannot change inside one), through exec; answers the new value.
      await this.#retrying(() => this.#db.exec(statement.sql));
      return this.#run({ sql: `PRAGMA ${setting[1]}`, args: [] });
    }
    const [result] = await this.#write([statement]);
    return result as ResultSet;
  }

  /** One transaction; a batch that writes holds the write lock from its first statement on. */
  async batch(stmts: Array<InStatement | [string, InArgs?]>, _mode?: TransactionMode): Promise<ResultSet[]> {
    const statements = stmts.map((s) => toStatement(Array.isArray(s) ? { sql: s[0], args: s[1] ?? [] } : s));
    if (statements.some((s) => !isReadOnly(s))) return this.#write(statements);
    return this.#retrying(() => {
      this.#db.exec("BEGIN DEFERRED");
      return this.#commit(statements);
    });
  }

  /** Start-up only: foreign keys are off around the migration, as drizzle's table rebuilds need. */
  async migrate(stmts: InStatement[]): Promise<ResultSet[]> {
    this.#db.exec("PRAGMA foreign_keys = off");
    try {
      return await this.#write(stmts.map(toStatement));
    } finally {
      this.#db.exec("PRAGMA foreign_keys = on");
    }
  }

  async executeMultiple(sql: string): Promise<void> {
    await this.#retrying(() => this.#db.exec(sql));
  }

  async transaction(): Promise<never> {
    throw new Error("interactive transactions are not supported on this client: use batch()");
  }

  async sync(): Promise<never> {
    throw new Error("sync() is for embedded replicas, not a local database file");
  }

  reconnect(): void {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.#prepared.clear();
    this.#db.close();
  }

  /**
   * Takes the write lock (waiting on timers), runs `statements`, commits; all or nothing. BEGIN to
   * COMMIT is one synchronous step: no other call can slip into the transaction.
   */
  #write(statements: Statement[]): Promise<ResultSet[]> {
    return this.#retrying(() => {
      this.#db.exec("BEGIN IMMEDIATE");
      return this.#commit(statements);
    });
  }

  /** Runs the statements inside the transaction just begun and commits, or rolls back and throws. */
  #commit(statements: Statement[]): ResultSet[] {
    try {
      const results = statements.map((s) => this.#run(s));
      this.#db.exec("COMMIT");
      return results;
    } catch (err) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw asCondition(err);
    }
  }

  /** Runs `attempt` until it does not fail with SQLITE_BUSY, sleeping between tries, up to the bound. */
  #retrying<T>(attempt: () => T): Promise<T> {
    const once = () => {
      if (this.closed) throw new Error("the database client is closed");
      return attempt();
    };
    return retryWhileBusy(once, isBusy, this.#maxWaitMs).catch((err: unknown) => {
      throw asCondition(err);
    });
  }
}

function toStatement(stmt: InStatement): Statement {
  return typeof stmt === "string" ? { sql: stmt, args: [] } : { sql: stmt.sql, args: stmt.args ?? [] };
}

/** The values SQLite takes, as @libsql/client converts them. */
function toSqlValue(value: InValue): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database");
  return value;
}

/** Integers as numbers (refusing ones JavaScript cannot hold exactly), blobs as ArrayBuffers: @libsql/client's `intMode: "number"`. */
function fromSqlValue(value: unknown): unknown {
  if (typeof value === "bigint") {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new RangeError("Received integer which cannot be safely represented as a JavaScript number");
    }
    return Number(value);
  }
  if (Buffer.isBuffer(value)) return value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  return value;
}

/** A Row as @libsql/client builds it: values by index (with `length`) and, enumerable, by column name. */
function toRow(values: unknown[], columns: string[]): Row {
  const row = {} as Row;
  Object.defineProperty(row, "length", { value: values.length });
  values.forEach((raw, i) => {
    const value = fromSqlValue(raw);
    Object.defineProperty(row, i, { value });
    const column = columns[i] as string;
    if (!Object.hasOwn(row, column))
      Object.defineProperty(row, column, { value, enumerable: true, configurable: true, writable: true });
  });
  return row;
}

function runStatement(stmt: Prepared, shape: Shape, args: InArgs): ResultSet {
  const bound = Array.isArray(args)
    ? args.map(toSqlValue)
    : Object.fromEntries(Object.entries(args).map(([k, v]) => [k.replace(/^[:@$]/, ""), toSqlValue(v)]));
  if (!shape.reader) {
    const info = stmt.run(bound) as { changes: number; lastInsertRowid: number | bigint };
    return resultSet([], [], [], info.changes, BigInt(info.lastInsertRowid));
  }
  const { columns, columnTypes } = shape;
  const rows = (stmt.all(bound) as unknown[][]).map((values) => toRow(values, columns));
  return resultSet(columns, columnTypes, rows, 0, undefined);
}

function resultSet(
  columns: string[],
  columnTypes: string[],
  rows: Row[],
  rowsAffected: number,
  lastInsertRowid: bigint | undefined,
): ResultSet {
  return {
    columns,
    columnTypes,
    rows,
    rowsAffected,
    lastInsertRowid,
    toJSON: () => ({
      columns,
      columnTypes,
      rows: rows.map((r) => Array.from(r as ArrayLike<unknown>)),
      rowsAffected,
      lastInsertRowid: lastInsertRowid?.toString() ?? null,
    }),
  };
}
