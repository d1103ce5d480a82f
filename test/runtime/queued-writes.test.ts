/**
 * Writes to a remote libSQL database go one at a time from each process, and SQLITE_BUSY is waited
 * out (src/runtime/host/queued-writes.ts). On a real sqld 0.24.32 first: with two "instances" of 20
 * concurrent writers each, every write commits across a checkpoint. Without the queue the
 * same load stops sqld's commits for good (bench/sqld-writers.ts measures it; 4 writers were
 * enough). Then the rules themselves, on a stand-in client: a real sqld cannot be made to answer
 * SQLITE_BUSY or to hang on demand, so those answers are scripted.
 */
import { type Client, createClient, type ResultSet } from "@libsql/client";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseBusyError } from "../../src/metadata/database-errors.js";
import { withQueuedWrites } from "../../src/runtime/host/queued-writes.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";

const MiB = 1024 * 1024;

describe("queued writes on a real sqld", () => {
  let sqld: Sqld;
  const clients: Client[] = [];
  beforeAll(async () => {
    sqld = await startSqld();
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await sqld?.close();
  });

  // Each 12 000-byte row spills over three overflow pages, two rows a batch: 200 batches write about
  // 1 600 WAL frames, past sqld's checkpoint (every 1000 frames), with fewer round trips than as many
  // small rows (800 batches of 1 500-byte rows: twice the time). 60 s: 100 round trips one after
  // another per client, on a loaded machine.
  it("two processes' worth of 20 concurrent writers of 5 batches each: all 200 commit (400 rows), none fails", {
    timeout: 60_000,
  }, async () => {
    const instances = [0, 1].map(() => {
      const client = createClient({ url: sqld.wsUrl });
      clients.push(client);
      return withQueuedWrites(client, 30_000);
    });
    await instances[0]!.execute("create table t (id integer primary key, who text, body text)");
    // A batch like a create's: a read, then writes, in one BEGIN IMMEDIATE … COMMIT.
    const writer = async (instance: Client, who: string, count: number) => {
      for (let i = 0; i < count; i++) {
        await instance.batch(
          [
            { sql: "select count(*) from t where who = ?", args: [who] },
            { sql: "insert into t (who, body) values (?, ?)", args: [who, "x".repeat(12_000)] },
            { sql: "insert into t (who, body) values (?, ?)", args: [who, "y".repeat(12_000)] },
          ],
          "write",
        );
      }
    };
    await Promise.all(Array.from({ length: 40 }, (_, w) => writer(instances[w % 2]!, `w${w}`, 5)));
    const { rows } = await instances[1]!.execute("select count(*) as n, count(distinct who) as writers from t");
    expect(rows[0]).toMatchObject({ n: 400, writers: 40 });
    // The load passed a checkpoint: only a checkpoint writes pages to the database file (one page
    // before the writes, the rest in the WAL); ~3 MiB of them when measured.
    expect(statSync(join(sqld.dir, "data/dbs/default/data")).size).toBeGreaterThan(MiB);
  });
});

/** A stand-in for @libsql/client: `batch` answers as `answer` says; counts how many run at once. */
function scripted(answer: (call: number) => Promise<ResultSet[]>) {
  let calls = 0;
  let running = 0;
  let mostAtOnce = 0;
  const client = {
    batch: async () => {
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      try {
        return await answer(++calls);
      } finally {
        running--;
      }
    },
    execute: async () => ({ rows: [] }) as unknown as ResultSet,
    close: () => {},
  } as unknown as Client;
  return { client, calls: () => calls, mostAtOnce: () => mostAtOnce };
}
const busy = () => Object.assign(new Error("SQLITE_BUSY: database is locked"), { code: "SQLITE_BUSY" });
const done: ResultSet[] = [];
const write = (client: Client) => client.batch([{ sql: "insert into t values (1)", args: [] }], "write");

describe("queued writes: the rules", () => {
  it("sends one write at a time from a process; reads are not held back", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stand = scripted(async () => {
      await gate;
      return done;
    });
    const queued = withQueuedWrites(stand.client, 5_000);
    const writes = Array.from({ length: 5 }, () => write(queued));
    // A read-only batch and a SELECT are answered while the writes wait.
    await expect(queued.execute("select 1")).resolves.toBeDefined();
    expect(stand.calls()).toBe(1);
    release();
    await Promise.all(writes);
    expect(stand.calls()).toBe(5);
    expect(stand.mostAtOnce()).toBe(1);
  });

  it("tries a write again when the server answers SQLITE_BUSY", async () => {
    const stand = scripted(async (call) => {
      if (call <= 3) throw busy();
      return done;
    });
    await expect(write(withQueuedWrites(stand.client, 5_000))).resolves.toBe(done);
    expect(stand.calls()).toBe(4);
  });

  it("gives up with DatabaseBusyError (503 DATABASE_BUSY) when SQLITE_BUSY lasts the whole wait", async () => {
    const stand = scripted(async () => {
      throw busy();
    });
    const failure = await write(withQueuedWrites(stand.client, 60)).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DatabaseBusyError);
    expect(stand.calls()).toBeGreaterThan(1);
  });

  it("does not try again on any other error", async () => {
    const stand = scripted(async () => {
      throw Object.assign(new Error("UNIQUE constraint failed"), { code: "SQLITE_CONSTRAINT" });
    });
    await expect(write(withQueuedWrites(stand.client, 5_000))).rejects.toThrow("UNIQUE constraint failed");
    expect(stand.calls()).toBe(1);
  });

  it("a write whose turn does not come within the wait fails with DatabaseBusyError, and never runs later", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const stand = scripted(async () => {
      await gate; // the server never answers the first write (a stalled sqld)
      return done;
    });
    const queued = withQueuedWrites(stand.client, 80);
    const first = write(queued);
    const second = await write(queued).catch((err: unknown) => err);
    expect(second).toBeInstanceOf(DatabaseBusyError);
    release();
    await first;
    await write(queued); // the turn passed on: the line is not stuck
    expect(stand.calls()).toBe(2);
  });
});
