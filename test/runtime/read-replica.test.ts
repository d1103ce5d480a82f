/**
 * CMS_DATABASE_READ_URL on real engines: a sqld primary and a sqld read replica of it (it follows the
 * primary over gRPC, so it lags), two Node server processes sharing one fs volume: A on the primary
 * only, B writing to the primary and reading from the replica. A resource created through A is never
 * a 404 on B (a miss on the replica is asked of the primary), B's own write requests read the primary
 * (two updates in a row never refuse each other as a stale revision), and B's getData really is
 * answered by the replica (it keeps serving with the primary down).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processClient } from "../helpers/process-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";

const base64 = (text: string) => Buffer.from(text).toString("base64");

describe("a second instance reading from a sqld read replica", () => {
  let dir: string;
  let primary: Sqld;
  let replica: Sqld;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-replica-"));
    primary = await startSqld();
    replica = await startSqld({ replicaOf: primary });
    const shared = { CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: primary.wsUrl };
    a = await spawnServer(shared); // migrates the primary first
    b = await spawnServer({ ...shared, CMS_DATABASE_READ_URL: replica.wsUrl });
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await Promise.all([replica?.close(), primary?.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  const post = (server: ServerProcess, verb: string, body: unknown) =>
    processClient(server, "replica").post(verb, body);
  const create = (server: ServerProcess, name: string, text: string) =>
    processClient(server, "replica").create({ resourceName: name }, text);

  it("answers 0 stale 404s in 200 create-then-read pairs (create on A, read at once on B)", async () => {
    // Four pairs at a time, each read sent as soon as its create is answered: the replica lags
    // behind every create as it would one after another, in a quarter of the wall time.
    const LANES = 4;
    const statuses: number[] = [];
    const lane = async (first: number) => {
      for (let i = first; i < 200; i += LANES) {
        const { resourceURI } = await create(a, `pair-${i}.txt`, `pair ${i}`);
        const res = await fetch(`${b.url}/cms/v1.0/getData/${resourceURI}`);
        statuses.push(res.status);
        if (res.status === 200) expect(await res.text()).toBe(`pair ${i}`);
        else await res.body?.cancel();
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, first) => lane(first)));
    expect(statuses).toHaveLength(200);
    expect(statuses.filter((s) => s === 404).length).toBe(0);
    expect(statuses.every((s) => s === 200)).toBe(true);
  }, 120_000);

  it("reads the primary inside its own write requests: two updates in a row on B both apply", async () => {
    const { resourceUID } = await create(b, "updated.txt", "v0");
    const locked = await post(b, "lockResourceDTO", { resourceUID, author: "ann" });
    expect(locked.status, await locked.clone().text()).toBe(200);
    const { lockID } = (await locked.json()) as { lockID: string };
    for (let i = 1; i <= 10; i++) {
      const res = await post(b, "updateResource", {
        resourceUID,
        author: "ann",
        lockID,
        resourceBinary: base64(`v${i}`),
      });
      expect(res.status, await res.clone().text()).toBe(200);
    }
  }, 60_000);

  it("answers getData from the replica: a resource B has never read is served with the primary down", async () => {
    const { resourceURI } = await create(a, "from-replica.txt", "served by the replica");
    // The replica has it once B can read it there; B's row cache holds no row it has not read.
    for (let tries = 0; ; tries++) {
      const rows = await fetch(`${replica.url}/v2/pipeline`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          requests: [
            { type: "execute", stmt: { sql: "SELECT count(*) FROM resources WHERE path = 'from-replica.txt'" } },
            { type: "close" },
          ],
        }),
      }).then((r) => r.json() as Promise<{ results: { response: { result: { rows: { value: string }[][] } } }[] }>);
      if (rows.results[0]?.response.result.rows[0]?.[0]?.value === "1") break;
      if (tries > 100) throw new Error("the replica never caught up");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await primary.stop();
    try {
      const res = await fetch(`${b.url}/cms/v1.0/getData/${resourceURI}`);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.text()).toBe("served by the replica");
    } finally {
      await primary.start();
    }
  }, 60_000);
});
