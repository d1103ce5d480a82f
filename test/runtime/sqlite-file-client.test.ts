/**
 * sqlite-file-client.ts against a real second process holding SQLite's write lock on the same file:
 * writes wait on timers (the event loop keeps turning), give up after the bound with
 * DatabaseBusyError, commit at once when the lock lifts, and no connection is opened or leaked.
 */
import { mkdtemp, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DatabaseBusyError } from "../../src/metadata/database-errors.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { holdWriteLock } from "../helpers/write-lock-holder.js";

/** Open file descriptors of this process on `file` (the database, not its -wal/-shm). */
async function openDescriptors(file: string): Promise<number> {
  let n = 0;
  for (const fd of await readdir("/proc/self/fd")) {
    if ((await readlink(`/proc/self/fd/${fd}`).catch(() => "")) === file) n++;
  }
  return n;
}

/** The longest gap between ticks of a 5 ms interval while `work` runs: how long the event loop stalled. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    const value = await work();
    return { value, stallMs };
  } finally {
    clearInterval(timer);
  }
}

describe("waiting for SQLite's write lock held by another process", () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-busy-"));
    file = join(dir, "cms.db");
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const open = async (maxWaitMs: number) => {
    const database = await openDatabase({ CMS_DATABASE_URL: `file:${file}`, CMS_DB_BUSY_TIMEOUT_MS: maxWaitMs });
    const client = database.db.$client;
    await client.execute("create table if not exists t (v text)");
    return { client, close: database.close };
  };

  it("waits without stalling the event loop and commits as soon as the lock lifts", async () => {
    const { client, close } = await open(5_000);
    const holder = await holdWriteLock(file, 400);
    const started = performance.now();
    const { stallMs } = await longestStall(() => client.execute({ sql: "insert into t values (?)", args: ["waited"] }));
    const waitedMs = performance.now() - started;
    await holder.released;
    expect(waitedMs).toBeGreaterThan(300);
    expect(waitedMs).toBeLessThan(1_500);
    expect(stallMs).toBeLessThan(100);
    // Batches too, and the next commits right away (no statement left in progress).
    await client.batch([
      { sql: "insert into t values ('a')", args: [] },
      { sql: "insert into t values ('b')", args: [] },
    ]);
    expect((await client.execute("select count(*) from t")).rows[0]?.[0]).toBe(3);
    close();
  });

  it("gives up after the bound with DatabaseBusyError, changing nothing; the next write commits", async () => {
    const { client, close } = await open(200);
    const holder = await holdWriteLock(file);
    const started = performance.now();
    const err = await client.execute({ sql: "insert into t values (?)", args: ["refused"] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DatabaseBusyError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    await holder.release();
    await client.execute({ sql: "insert into t values (?)", args: ["after"] });
    expect((await client.execute("select v from t")).rows.map((r) => r[0])).toEqual(["after"]);
    close();
  });

  it("keeps one connection through lock episodes: waiting opens none and leaks none", async () => {
    const { client, close } = await open(100);
    await client.execute("select 1");
    const before = await openDescriptors(file);
    for (let round = 0; round < 5; round++) {
      const holder = await holdWriteLock(file);
      await Promise.allSettled(
        Array.from({ length: 4 }, (_, i) =>
          client.execute({ sql: "insert into t values (?)", args: [`r${round}-${i}`] }),
        ),
      );
      await holder.release();
      await client.execute({ sql: "insert into t values (?)", args: [`after ${round}`] });
    }
    expect(before).toBe(1);
    expect(await openDescriptors(file)).toBe(before);
    close();
  });
});

describe("prepared statements reused by SQL text", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-prepared-"));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const open = async () => {
    const database = await openDatabase({
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_DB_BUSY_TIMEOUT_MS: 1_000,
    });
    return { client: database.db.$client, close: database.close };
  };

  it("runs a statement again with new values, and a failed one neither poisons the connection nor itself", async () => {
    const { client, close } = await open();
    await client.execute("create table u (k text primary key, n integer)");
    const insert = "insert into u (k, n) values (?, ?)";
    await client.execute({ sql: insert, args: ["a", 1] });
    await expect(client.execute({ sql: insert, args: ["a", 2] })).rejects.toThrow(/UNIQUE/);
    // The same SQL after its failure, in a batch with another statement: both commit.
    await client.batch([
      { sql: insert, args: ["b", 2] },
      { sql: "update u set n = n + 10 where k = ?", args: ["a"] },
    ]);
    const select = "select k, n from u order by k";
    expect((await client.execute(select)).rows.map((r) => [r.k, r.n])).toEqual([
      ["a", 11],
      ["b", 2],
    ]);
    await client.execute({ sql: insert, args: ["c", 3] });
    expect((await client.execute(select)).rows.map((r) => [r.k, r.n])).toEqual([
      ["a", 11],
      ["b", 2],
      ["c", 3],
    ]);
    close();
  });

  it("sees a schema change: a reused `select *` answers the new columns", async () => {
    const { client, close } = await open();
    await client.execute("create table v (a integer)");
    await client.execute("insert into v values (1)");
    expect((await client.execute("select * from v")).columns).toEqual(["a"]);
    await client.execute("alter table v add column b text default 'x'");
    const after = await client.execute("select * from v");
    expect(after.columns).toEqual(["a", "b"]);
    expect([after.rows[0]?.a, after.rows[0]?.b]).toEqual([1, "x"]);
    close();
  });

  it("stays correct past the bound on distinct statements (least recently used ones are prepared again)", async () => {
    const { client, close } = await open();
    await client.execute("create table w (n integer)");
    for (let i = 0; i < 200; i++)
      await client.execute({ sql: `insert into w (n) values (${i}) -- statement ${i}`, args: [] });
    await client.execute("insert into w (n) values (1000)");
    const sum = await client.execute("select sum(n) as s, count(*) as c from w");
    expect([sum.rows[0]?.s, sum.rows[0]?.c]).toEqual([(199 * 200) / 2 + 1000, 201]);
    close();
  });
});
