/**
 * Durable commits off the main thread: on a real libSQL file, every write resolves only after a WAL
 * sync that started after its commit; concurrent writes share syncs; reads never wait for one.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, realpath, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { groupCommit, withDurableCommits } from "../../src/runtime/host/durable-commits.js";
import { openDatabase, walSyncer } from "../../src/runtime/host/database.js";

/** A sync the test completes by hand; records how many were started. */
function manualSync() {
  const pending: (() => void)[] = [];
  return {
    started: () => pending.length,
    sync: () => new Promise<void>((resolve) => pending.push(resolve)),
    finish(i: number) {
      pending[i]?.();
    },
  };
}

const settled = async <T>(promise: Promise<T>) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
};

describe("groupCommit", () => {
  it("runs one sync at a time and gives callers that arrive during it the next one", async () => {
    const m = manualSync();
    const sync = groupCommit(m.sync);
    const first = sync();
    const second = sync(); // its commit may postdate the running sync
    const third = sync();
    expect(m.started()).toBe(1);
    m.finish(0);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false);
    expect(m.started()).toBe(2); // one more sync, shared by the two waiting callers
    m.finish(1);
    expect(await settled(second)).toBe(true);
    expect(await settled(third)).toBe(true);
    expect(m.started()).toBe(2);
  });

  it("still runs the next sync after one fails, and reports the failure to its callers", async () => {
    let calls = 0;
    const sync = groupCommit(async () => {
      calls++;
      if (calls === 1) throw new Error("EIO");
    });
    const first = sync();
    const second = sync();
    await expect(first).rejects.toThrow("EIO");
    await expect(second).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});

describe("withDurableCommits on a libSQL file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-durable-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("holds every write until a sync completes, and lets reads through", async () => {
    const raw = createClient({ url: `file:${join(dir, "t.db")}` });
    const m = manualSync();
    const client = withDurableCommits(raw, m.sync);
    try {
      await raw.execute("CREATE TABLE t (x INTEGER)");
      const insert = client.execute({ sql: "INSERT INTO t VALUES (?)", args: [1] });
      const batch = client.batch(["INSERT INTO t VALUES (2)", "INSERT INTO t VALUES (3)"], "write");
      // Both committed (each then asks for a sync), neither acknowledged.
      await vi.waitFor(() => expect(m.started()).toBe(2));
      expect(Number((await client.execute("SELECT count(*) AS n FROM t")).rows[0]?.n)).toBe(3);
      expect(await settled(insert)).toBe(false);
      expect(await settled(batch)).toBe(false);
      expect(m.started()).toBe(2); // the read did not ask for one
      m.finish(0);
      m.finish(1);
      expect(await settled(insert)).toBe(true);
      expect(await settled(batch)).toBe(true);
    } finally {
      raw.close();
    }
  });

  it("is how the server opens a local database: WAL with synchronous = NORMAL", async () => {
    const db = await openDatabase({ CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
    try {
      const journal = await db.db.$client.execute("PRAGMA journal_mode");
      const synchronous = await db.db.$client.execute("PRAGMA synchronous");
      expect(String(journal.rows[0]?.[0])).toBe("wal");
      expect(Number(synchronous.rows[0]?.[0])).toBe(1); // NORMAL
      // A write through it completes (its WAL fsync ran in the thread pool).
      await db.db.$client.execute("CREATE TABLE probe (x INTEGER)");
      await db.db.$client.execute("INSERT INTO probe VALUES (1)");
    } finally {
      db.close();
    }
  });
});

describe("walSyncer", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "cms-wal-"))); // as /proc names it
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** What this process's open descriptors name, among the files of `dir` ("… (deleted)" once unlinked). */
  const openFilesIn = (where: string) =>
    readdirSync("/proc/self/fd")
      .map((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          return ""; // closed meanwhile (readdir's own descriptor)
        }
      })
      .filter((target) => target.startsWith(`${where}/`))
      .map((target) => target.slice(where.length + 1));

  it("keeps one descriptor on the WAL across syncs, and moves to a WAL that replaced it", async () => {
    const db = join(dir, "cms.db");
    await writeFile(db, "");
    await writeFile(`${db}-wal`, "first");
    const wal = walSyncer(db);
    await wal.sync();
    await wal.sync();
    expect(openFilesIn(dir)).toEqual(["cms.db-wal"]);
    // SQLite deleted the WAL and made a new one: the old descriptor must not stand for it.
    await unlink(`${db}-wal`);
    await writeFile(`${db}-wal`, "second");
    await wal.sync();
    expect(openFilesIn(dir)).toEqual(["cms.db-wal"]);
    // No WAL at all: the database file is synced (and nothing stays open).
    await unlink(`${db}-wal`);
    await wal.sync();
    expect(openFilesIn(dir)).toEqual([]);
    await writeFile(`${db}-wal`, "third");
    await wal.sync();
    await wal.close();
    expect(openFilesIn(dir)).toEqual([]);
  });
});
