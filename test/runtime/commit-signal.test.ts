/**
 * The row cache's "did anyone commit?" check on a real libSQL file: a commit by any connection —
 * another process's included — is seen by the next call, also across a WAL reset and a damaged
 * -shm file, and a database not in WAL mode gets its answers from PRAGMA data_version.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitSignal } from "../../src/runtime/host/commit-signal.js";

let dir: string;
let file: string;
const opened: { close(): void }[] = [];
const connect = () => {
  const db = new Database(file);
  opened.push(db);
  return db;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-signal-"));
  file = join(dir, "cms.db");
});
afterEach(async () => {
  for (const db of opened.splice(0).reverse()) db.close();
  await rm(dir, { recursive: true, force: true });
});

function walDatabase() {
  const writer = connect();
  writer.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x)");
  return writer;
}

describe("commitSignal", () => {
  it("reads the WAL index where there is one, and reports each commit of any connection once", () => {
    const writer = walDatabase();
    const reader = connect();
    const signal = commitSignal(reader, file);
    expect(signal.source).toBe("wal-index");
    expect(signal.changed()).toBe(true); // the first call: nothing seen yet
    expect(signal.changed()).toBe(false);
    writer.prepare("INSERT INTO t VALUES (1)").run();
    expect(signal.changed()).toBe(true);
    expect(signal.changed()).toBe(false);
    const other = connect(); // another process's connection
    other.prepare("INSERT INTO t VALUES (2)").run();
    expect(signal.changed()).toBe(true);
    reader.prepare("INSERT INTO t VALUES (3)").run(); // the reader's own connection too
    expect(signal.changed()).toBe(true);
  });

  it("sees a commit after the WAL was checkpointed and restarted from its start", () => {
    const writer = walDatabase();
    const reader = connect();
    const signal = commitSignal(reader, file);
    writer.prepare("INSERT INTO t VALUES (1)").run();
    signal.changed();
    writer.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    signal.changed();
    // The same number of frames as before the reset: only the salts and the change counter differ.
    writer.prepare("INSERT INTO t VALUES (1)").run();
    expect(signal.changed()).toBe(true);
    expect(signal.changed()).toBe(false);
  });

  it("falls back to PRAGMA data_version outside WAL mode", () => {
    const writer = connect();
    writer.exec("CREATE TABLE t (x)");
    const reader = connect();
    const signal = commitSignal(reader, file);
    expect(signal.source).toBe("data_version");
    signal.changed();
    expect(signal.changed()).toBe(false);
    writer.prepare("INSERT INTO t VALUES (1)").run();
    expect(signal.changed()).toBe(true);
    expect(signal.changed()).toBe(false);
  });

  it("reads the header SQLite rebuilt after the -shm file was damaged", async () => {
    const writer = walDatabase();
    writer.prepare("INSERT INTO t VALUES (1)").run();
    const reader = connect();
    await writeFile(`${file}-shm`, Buffer.alloc(48, 7), { flag: "r+" }); // not a WAL-index header
    const signal = commitSignal(reader, file);
    expect(signal.source).toBe("wal-index");
    signal.changed();
    expect(signal.changed()).toBe(false);
    writer.prepare("INSERT INTO t VALUES (2)").run();
    expect(signal.changed()).toBe(true);
    expect(reader.prepare("SELECT count(*) FROM t").raw(true).get()).toEqual([2]);
  });
});
