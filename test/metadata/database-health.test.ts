/**
 * The database's availability judge (metadata/database-health.ts) and its classifier
 * (isDatabaseUnavailable), on real errors: @libsql/client against a closed loopback port (HTTP and
 * WebSockets), SQLite on a real file. A statement's own failure (a constraint) is no outage and
 * passes through unchanged; an outage is logged once when it starts and once when it ends; a read
 * that succeeds does not end an outage a write met.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient, type ResultSet } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/lib/logger.js";
import { DatabaseUnavailableError, isDatabaseUnavailable } from "../../src/metadata/database-errors.js";
import { createDatabaseHealth, withDatabaseHealth } from "../../src/metadata/database-health.js";
import { createSqliteFileClient } from "../../src/runtime/host/sqlite-file-client.js";
import { freePort } from "../helpers/test-app.js";

function judge() {
  const lines: Record<string, unknown>[] = [];
  let now = 1_000;
  const health = createDatabaseHealth(
    createJsonLogger((line) => lines.push(JSON.parse(line)), "debug"),
    () => now,
  );
  return { health, lines, advance: (ms: number) => (now += ms), messages: () => lines.map((l) => l.msg) };
}

/** What a statement threw (fails the test if it did not throw). */
const thrown = (pending: Promise<unknown>) =>
  pending.then(
    () => expect.fail("expected the statement to fail"),
    (err: unknown) => err,
  );

describe("isDatabaseUnavailable on real errors", () => {
  it.each(["http", "ws"])("is true for @libsql/client over %s to a port nothing listens on", async (scheme) => {
    const client = createClient({ url: `${scheme}://127.0.0.1:${await freePort()}` });
    try {
      expect(isDatabaseUnavailable(await thrown(client.execute("select 1")))).toBe(true);
    } finally {
      client.close();
    }
  });

  describe("on a database file", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "cms-health-"));
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it("is false for a statement's own failure (a constraint, a syntax error), true for a file that is no database", async () => {
      const client = createSqliteFileClient({ file: join(dir, "ok.db"), maxWaitMs: 100 });
      await client.execute("create table t (x primary key)");
      await client.execute("insert into t values (1)");
      expect(isDatabaseUnavailable(await thrown(client.execute("insert into t values (1)")))).toBe(false);
      expect(isDatabaseUnavailable(await thrown(client.execute("selec 1")))).toBe(false);
      client.close();

      await writeFile(join(dir, "garbage.db"), Buffer.alloc(8192, 0x5a));
      const garbage = createSqliteFileClient({ file: join(dir, "garbage.db"), maxWaitMs: 100 });
      const err = await thrown(garbage.execute("select * from sqlite_schema"));
      expect((err as { code?: string }).code).toBe("SQLITE_NOTADB");
      expect(isDatabaseUnavailable(err)).toBe(true);
      garbage.close();
    });
  });
});

describe("the database health judge", () => {
  it("turns an outage's errors into DatabaseUnavailableError and logs its start and its end once each", async () => {
    const { health, lines, advance, messages } = judge();
    const client = withDatabaseHealth(createClient({ url: `http://127.0.0.1:${await freePort()}` }), health);
    try {
      for (let i = 0; i < 5; i++) {
        const err = await thrown(client.execute("select 1"));
        expect(err).toBeInstanceOf(DatabaseUnavailableError);
        expect((err as Error).cause).toBeInstanceOf(Error); // the driver's error stays as the cause
      }
      expect(messages()).toEqual(["database unavailable"]);
      expect(lines[0]).toMatchObject({ level: "error", statement: "read" });
      expect(String(lines[0]?.detail)).toMatch(/ECONNREFUSED/);
      advance(2_500);
      health.succeeded("read");
      health.succeeded("read");
      expect(messages()).toEqual(["database unavailable", "database available again"]);
      expect(lines[1]).toMatchObject({ downMs: 2_500, failedStatements: 5 });
    } finally {
      client.close();
    }
  });

  it("passes a statement's own failure through unchanged, and it starts no outage", async () => {
    const { health, messages } = judge();
    const constraint = Object.assign(new Error("UNIQUE constraint failed: t.x"), {
      code: "SQLITE_CONSTRAINT_PRIMARYKEY",
      rawCode: 1555,
    });
    expect(health.failed(constraint, "write")).toBe(constraint);
    expect(messages()).toEqual([]);
  });

  it("does not end an outage that writes met when a read succeeds (a volume refusing writes still serves reads)", () => {
    const { health, messages } = judge();
    // What libsql throws when the WAL refuses a write (seen in test/hardening/db-outage.test.ts).
    const ioError = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE", rawCode: 778 });
    for (let i = 0; i < 3; i++) {
      expect(health.failed(ioError, "write")).toBeInstanceOf(DatabaseUnavailableError);
      health.succeeded("read");
    }
    expect(messages()).toEqual(["database unavailable"]);
    health.succeeded("write");
    expect(messages()).toEqual(["database unavailable", "database available again"]);
    // A new outage is a new line.
    health.failed(ioError, "write");
    expect(messages()).toEqual(["database unavailable", "database available again", "database unavailable"]);
  });

  it("does not end an outage when a statement sent before it began succeeds late", async () => {
    const { health, messages } = judge();
    // A client whose answers the test hands out: the order (an answer sent before the outage, read
    // after a failure that started it) cannot be made to happen with a real server (seen once, under
    // load, in test/hardening/db-outage.test.ts: two "database unavailable" lines for one outage).
    const answers: ((rows: ResultSet) => void)[] = [];
    const client = withDatabaseHealth(
      {
        execute: () => new Promise<ResultSet>((resolve) => answers.push(resolve)),
      } as unknown as Client,
      health,
    );
    const early = client.execute("select 1");
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    health.failed(refused, "read"); // a later statement met the outage first
    answers.shift()?.({ rows: [], rowsAffected: 0 } as unknown as ResultSet);
    await early;
    expect(messages()).toEqual(["database unavailable"]);
    const late = client.execute("select 1"); // sent during the outage: its success ends it
    answers.shift()?.({ rows: [], rowsAffected: 0 } as unknown as ResultSet);
    await late;
    expect(messages()).toEqual(["database unavailable", "database available again"]);
  });

  it("does not end an outage that writes met when a write changes nothing (it wrote no page), on a real file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-health-"));
    const { health, messages } = judge();
    const client = withDatabaseHealth(createClient({ url: `file:${join(dir, "t.db")}` }), health);
    try {
      await client.execute("create table t (x integer)");
      const ioError = Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR_WRITE", rawCode: 778 });
      health.failed(ioError, "write");
      // A background pass's claim with nothing due: an UPDATE of no row, which SQLite commits
      // without writing, even on a volume that refuses writes (seen in db-outage.test.ts).
      await client.execute("update t set x = 1 where x = 0");
      await client.batch(["update t set x = 2 where x = 0", "select 1"], "write");
      expect(messages()).toEqual(["database unavailable"]);
      await client.execute("insert into t values (1)");
      expect(messages()).toEqual(["database unavailable", "database available again"]);
    } finally {
      client.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
