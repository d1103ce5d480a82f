/**
 * Issue 25 §5 on Workers: the bundled Worker on workerd with CMS_DATABASE_URL naming a real sqld
 * (migrated by a Node instance first, as in a deployment), stopped while the Worker runs and started
 * again on the same port: 503 DATABASE_UNAVAILABLE with Retry-After (never 500), logged once, and
 * recovery by itself. The server process's cases are db-outage.test.ts. (D1 is not covered:
 * Miniflare's D1 cannot be taken down from outside.)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/runtime/host/database.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";
import { sharedWorkerBundle, startWorkerd, type WorkerdServer } from "../helpers/workerd.js";
import { client, expectUnavailable, ROUNDS, untilStatus, writtenBefore } from "./db-outage.js";
import { report } from "./scale.js";

describe("the Worker (workerd) on a remote database (sqld over http) that goes down", () => {
  let sqld: Sqld;
  let dir: string;
  let worker: WorkerdServer;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    sqld = await startSqld();
    // A Worker does not migrate (it cannot read drizzle/): a Node instance does, as in a deployment.
    (await openDatabase({ CMS_DATABASE_URL: sqld.url })).close();
    dir = await mkdtemp(join(tmpdir(), "cms-outage-worker-"));
    worker = await startWorkerd(sharedWorkerBundle(), {
      bindings: { CMS_DATABASE_URL: sqld.url },
      onLog: (message) => {
        for (const line of message.split("\n"))
          if (line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    });
  }, 120_000);
  afterAll(async () => {
    await worker?.close();
    await sqld?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 503 DATABASE_UNAVAILABLE + Retry-After while sqld is stopped, logs it once, and recovers by itself", async () => {
    const cms = client(worker.url);
    const { resourceURI } = await writtenBefore(cms);

    await sqld.stop();
    for (let i = 0; i < ROUNDS; i++) {
      await expectUnavailable(await cms.getData(resourceURI));
      await expectUnavailable(await cms.create(`during-${i}.txt`, `written during the outage ${i}`));
    }
    const outage = lines.filter((l) => l.msg === "database unavailable");
    expect(outage).toHaveLength(1);
    expect(lines.filter((l) => l.msg === "unhandled error")).toEqual([]);

    await sqld.start();
    const recoveryMs = await untilStatus(() => cms.getData(resourceURI), 200);
    const after = await cms.create("after.txt", "written after the outage");
    expect(after.status, await after.clone().text()).toBe(201);
    expect(lines.filter((l) => l.msg === "database available again")).toHaveLength(1);
    report("db-outage-worker-sqld-http", {
      requestsWhileDown: ROUNDS * 2,
      whileDown: 503,
      recoveredAfterStartMs: recoveryMs.toFixed(0),
      createAfter: after.status,
    });
  });
});
