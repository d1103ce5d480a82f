/**
 * Issue 25 §5: a database outage answers 503 DATABASE_UNAVAILABLE with Retry-After (never 500),
 * is logged once when it starts and once when it ends, and the service recovers by itself.
 *
 * Remote: the server process (`dist/node/server.mjs`) on a real sqld (test/helpers/sqld.ts), over
 * Hrana on HTTP and on WebSockets. sqld is stopped while the service runs, then started again on the
 * same port over the same data; nothing restarts the service. While it is down: getData (read once
 * before, so the row cache held it, for 1 ms: past its bound only the database answers),
 * createResource, queryResource, a tus creation, and /readyz (503 UNAVAILABLE, as before).
 *
 * Local `file:` database: its data files are made immutable (`chattr +i` on the database and its
 * WAL). The test runs as root, where permission bits deny nothing; the immutable flag refuses every
 * write even to a descriptor already open (EPERM), root's included. That is what a volume that
 * stopped taking writes looks like to SQLite (an ext4 volume remounted read-only after an I/O error,
 * a detached network disk): "disk I/O error" (SQLITE_IOERR_WRITE) on the next commit, while reads of
 * what is there go on. The `-shm` index is left alone: it is written through a shared mapping, and a
 * refused write there is SIGBUS, not an error. Where chattr is not permitted (not root, or a file
 * system without the flag) that case cannot run and is reported as skipped; what runs everywhere is
 * the start-up check: a `file:` database that is no database stops the server with one line.
 *
 * Workers: db-outage.workerd.test.ts (in the heavy lane, with the other files that start workerd).
 */
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectProblem } from "../helpers/cms-client.js";
import { runUntilExit, type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";
import {
  client,
  expectUnavailable,
  logged,
  RECOVERY_LIMIT_MS,
  ROUNDS,
  untilStatus,
  writtenBefore,
} from "./db-outage.js";
import { report } from "./scale.js";

/**
 * The remote row cache's bound, kept on but as short as it goes: a row read before the outage has
 * expired by the time sqld has stopped, so no fixed wait is needed for "past the bound, only the
 * database answers". That the cache serves a row within its bound and asks again after it is shown
 * with a moved clock in test/metadata/row-cache.test.ts.
 */
const ROW_CACHE_TTL_MS = 1;

describe.each(["http", "ws"] as const)(
  "a remote database (sqld over %s) that goes down while the service runs",
  (protocol) => {
    let sqld: Sqld;
    let dir: string;
    let server: ServerProcess;

    beforeAll(async () => {
      sqld = await startSqld();
      dir = await mkdtemp(join(tmpdir(), "cms-outage-"));
      server = await spawnServer({
        CMS_DATABASE_URL: protocol === "http" ? sqld.url : sqld.wsUrl,
        CMS_VOLUME: join(dir, "volume"),
        CMS_ROW_CACHE_TTL_MS: String(ROW_CACHE_TTL_MS),
      });
    });
    afterAll(async () => {
      await server?.stop();
      await sqld?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("answers 503 DATABASE_UNAVAILABLE + Retry-After while sqld is stopped, logs it once, and recovers by itself", async () => {
      const cms = client(server.url);
      const { resourceURI, resourceUID } = await writtenBefore(cms);
      // Read once, so a row cache (if a remote database had one) would hold it.
      expect((await cms.getData(resourceURI)).status).toBe(200);

      await sqld.stop(); // resolves once sqld has exited: far longer than the 1 ms bound
      const statuses: Record<string, number[]> = {
        getData: [],
        createResource: [],
        queryResource: [],
        tusCreate: [],
        readyz: [],
      };
      for (let i = 0; i < ROUNDS; i++) {
        const read = await cms.getData(resourceURI);
        statuses.getData?.push(read.status);
        await expectUnavailable(read);
        const created = await cms.create(`during-${i}.txt`, `written during the outage ${i}`);
        statuses.createResource?.push(created.status);
        await expectUnavailable(created);
        const queried = await cms.query(resourceUID);
        statuses.queryResource?.push(queried.status);
        await expectUnavailable(queried);
        const upload = await cms.createUpload(`upload-${i}.bin`);
        statuses.tusCreate?.push(upload.status);
        await expectUnavailable(upload);
        const ready = await fetch(`${server.url}/readyz`);
        statuses.readyz?.push(ready.status);
        await expectProblem(ready, 503, "UNAVAILABLE");
      }
      // One line for the whole outage, however many requests met it; no request logged as a bug.
      expect(logged(server, "database unavailable")).toHaveLength(1);
      expect(logged(server, "unhandled error")).toEqual([]);

      const restarted = performance.now();
      await sqld.start(); // same port, same data
      const sqldStartMs = performance.now() - restarted;
      const recoveryMs = await untilStatus(() => cms.getData(resourceURI), 200);
      expect(await (await cms.getData(resourceURI)).text()).toBe("written before the outage");
      const after = await cms.create("after.txt", "written after the outage");
      expect(after.status, await after.clone().text()).toBe(201);
      // /readyz shares one result for READINESS_CACHE_MS (2 s), so it may still say 503 for that long.
      expect(await untilStatus(() => fetch(`${server.url}/readyz`), 200)).toBeLessThan(RECOVERY_LIMIT_MS);

      const [outage] = logged(server, "database unavailable");
      expect(outage?.level).toBe("error");
      const recovered = logged(server, "database available again");
      expect(recovered).toHaveLength(1);
      expect(Number(recovered[0]?.downMs)).toBeGreaterThan(0);
      report(`db-outage-sqld-${protocol}`, {
        requestsWhileDown: ROUNDS * 5,
        getDataWhileDown: [...new Set(statuses.getData)].join("/"),
        createWhileDown: [...new Set(statuses.createResource)].join("/"),
        queryWhileDown: [...new Set(statuses.queryResource)].join("/"),
        tusCreateWhileDown: [...new Set(statuses.tusCreate)].join("/"),
        readyzWhileDown: [...new Set(statuses.readyz)].join("/"),
        outageLines: 1,
        sqldStartMs: sqldStartMs.toFixed(0),
        recoveredAfterStartMs: recoveryMs.toFixed(0),
        createAfter: after.status,
      });
    });
  },
);

/** Sets or clears the immutable flag; throws (with chattr's message) where that is not permitted. */
const immutable = (on: boolean, files: string[]) =>
  execFileSync("chattr", [on ? "+i" : "-i", ...files], { stdio: "pipe" });

/** Whether this process may set the flag in the temp folder (root with CAP_LINUX_IMMUTABLE, a file system that has it). */
function canSetImmutable(): boolean {
  const probe = join(tmpdir(), `cms-immutable-probe-${process.pid}`);
  writeFileSync(probe, "");
  try {
    immutable(true, [probe]);
    immutable(false, [probe]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { force: true });
  }
}

describe.runIf(canSetImmutable())(
  "a file: database whose volume stops taking writes while the service runs (needs chattr +i)",
  () => {
    let dir: string;
    let server: ServerProcess;
    let files: string[];

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "cms-outage-file-"));
      const database = join(dir, "cms.db");
      files = [database, `${database}-wal`];
      server = await spawnServer({ CMS_DATABASE_URL: `file:${database}`, CMS_VOLUME: join(dir, "volume") });
    });
    afterAll(async () => {
      // Cleared first: an immutable file cannot be removed.
      if (files) immutable(false, files);
      await server?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it("refuses writes with 503 DATABASE_UNAVAILABLE, keeps serving reads, logs it once, and writes again once it can", async () => {
      const cms = client(server.url);
      const { resourceURI, resourceUID } = await writtenBefore(cms);

      immutable(true, files);
      const statuses: Record<string, number[]> = { createResource: [], getData: [], queryResource: [] };
      try {
        for (let i = 0; i < ROUNDS; i++) {
          const created = await cms.create(`during-${i}.txt`, `written during the outage ${i}`);
          statuses.createResource?.push(created.status);
          await expectUnavailable(created);
          // Reads of what the file holds go on (first read of this row: no cache answers it).
          const read = await cms.getData(resourceURI);
          statuses.getData?.push(read.status);
          expect(read.status).toBe(200);
          expect(await read.text()).toBe("written before the outage");
          const queried = await cms.query(resourceUID);
          statuses.queryResource?.push(queried.status);
          expect(queried.status).toBe(200);
        }
        const outages = [...logged(server, "database unavailable"), ...logged(server, "database available again")];
        expect(
          outages.map((l) => l.msg),
          JSON.stringify(outages),
        ).toEqual(["database unavailable"]);
        expect(logged(server, "unhandled error")).toEqual([]);
      } finally {
        immutable(false, files);
      }

      const after = await cms.create("after.txt", "written after the outage");
      expect(after.status, await after.clone().text()).toBe(201);
      const { resourceURI: afterURI } = (await after.json()) as { resourceURI: string };
      expect(await (await cms.getData(afterURI)).text()).toBe("written after the outage");
      expect(logged(server, "database unavailable")).toHaveLength(1);
      expect(logged(server, "database available again")).toHaveLength(1);
      report("db-outage-file", {
        requestsWhileDown: ROUNDS * 3,
        createWhileDown: [...new Set(statuses.createResource)].join("/"),
        getDataWhileDown: [...new Set(statuses.getData)].join("/"),
        queryWhileDown: [...new Set(statuses.queryResource)].join("/"),
        createAfter: after.status,
      });
    });
  },
);

describe("a file: database that is no database at start-up", () => {
  it("stops the server with exit code 1 and one line that says so", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-outage-garbage-"));
    try {
      const database = join(dir, "cms.db");
      await writeFile(database, Buffer.alloc(8192, 0x5a)); // a file restored from the wrong backup, a damaged disk
      const result = await runUntilExit({ CMS_DATABASE_URL: `file:${database}`, CMS_VOLUME: join(dir, "volume") });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split("\n")).toEqual(["cannot start: file is not a database"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
