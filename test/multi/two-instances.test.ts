/**
 * Issue 27 §1: two service processes (the shipped bundle) on one real libSQL server (sqld, over
 * ws://) and one bucket of a real S3 (Ceph RGW, test/helpers/rgw.ts), started with the commands of
 * docs/scale-out.md (B also reads from a sqld replica, where CMS_DATABASE_READ_URL is supported),
 * behind a round-robin proxy: the lifecycle across instances, a lock race, a
 * quota race, tus with every request on the other instance, purge, and both collectors at once.
 */
import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tenantPrefix } from "../../src/storage/keys.js";
import { API, base64, type Client, cmsClient } from "../helpers/cms-client.js";
import { forwardTo } from "../helpers/forward.js";
import { createRgwBucket, type RgwCluster, rgwObjectKeys, sharedRgw } from "../helpers/rgw.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { freePort } from "../helpers/test-app.js";
import { runBlock, runBlockToEnd, scaleOutBlocks } from "./doc-blocks.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BUCKET = "scale-out";
const PREFIX = "cms/";

/** Servers started from the document's blocks: killed if this process exits without stopping them. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Runs a sqld block and waits for its /health; `stop()` ends it. */
async function startSqldBlock(block: string, vars: Record<string, string>, httpAddr: string) {
  const child = runBlock(block, vars);
  live.add(child);
  let output = "";
  child.stderr?.on("data", (d) => (output = (output + d).slice(-4000)));
  for (const deadline = Date.now() + 20_000; ; await sleep(50)) {
    if (child.exitCode !== null) throw new Error(`sqld exited (${child.exitCode}): ${output}`);
    const res = await fetch(`http://${httpAddr}/health`).catch(() => null);
    await res?.body?.cancel();
    if (res?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`sqld did not answer on ${httpAddr}: ${output}`);
  }
  return {
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      live.delete(child);
    },
  };
}

/** A load balancer on 127.0.0.1: request n goes to upstream n mod 2. Counts what each one got. */
async function roundRobin(upstreams: () => URL[]) {
  let next = 0;
  const served: string[] = [];
  const server: Server = createServer((req, res) => {
    const all = upstreams();
    const upstream = all[next++ % all.length]!;
    served.push(`${req.method} ${upstream.port}`);
    forwardTo(upstream, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    served,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("two instances on one sqld (ws://) and one Ceph RGW bucket, started as docs/scale-out.md says", () => {
  let dir: string;
  let rgw: RgwCluster;
  let primary: { stop(): Promise<void> };
  let replica: { stop(): Promise<void> } | undefined;
  let dbUrl: string;
  let replicaUrl: string;
  let lb: Awaited<ReturnType<typeof roundRobin>>;
  let a: ServerProcess;
  let b: ServerProcess;
  let vars: Record<string, string>;
  let blocks: Map<string, string>;
  const on = (server: ServerProcess, tenant: string): Client => cmsClient({ url: (p) => server.url + p }, tenant);

  beforeAll(async () => {
    blocks = await scaleOutBlocks();
    dir = await mkdtemp(join(tmpdir(), "cms-scale-out-"));
    [rgw] = await Promise.all([
      sharedRgw(),
      (async () => {
        // Probed: sqld logs "127.0.0.1:0", not the port it took (test/helpers/sqld.ts).
        const [http, grpc] = [await freePort(), await freePort()];
        primary = await startSqldBlock(
          blocks.get("sqld-primary")!,
          {
            SQLD_DATA: join(dir, "primary"),
            SQLD_HTTP_ADDR: `127.0.0.1:${http}`,
            SQLD_GRPC_ADDR: `127.0.0.1:${grpc}`,
          },
          `127.0.0.1:${http}`,
        );
        dbUrl = `ws://127.0.0.1:${http}`;
        const replicaHttp = await freePort();
        replica = await startSqldBlock(
          blocks.get("sqld-replica")!,
          {
            REPLICA_DATA: join(dir, "replica"),
            REPLICA_HTTP_ADDR: `127.0.0.1:${replicaHttp}`,
            PRIMARY_GRPC_URL: `http://127.0.0.1:${grpc}`,
          },
          `127.0.0.1:${replicaHttp}`,
        );
        replicaUrl = `ws://127.0.0.1:${replicaHttp}`;
      })(),
    ]);
    await createRgwBucket(rgw, BUCKET);
    lb = await roundRobin(() => [new URL(a.url), new URL(b.url)]);
    vars = {
      DB_URL: dbUrl,
      DB_TOKEN: "",
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: BUCKET,
      S3_PREFIX: PREFIX,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      LINK_SECRET: randomBytes(24).toString("hex"),
      PUBLIC_URL: lb.url,
      LISTEN_HOST: "127.0.0.1",
      LISTEN_PORT: "0",
      // The suite's own knobs, beside the document's: a tenant with a quota, collectors every second.
      CMS_QUOTA_OVERRIDES: JSON.stringify({ quota10: { resources: 10 } }),
      CMS_GC_INTERVAL_SECONDS: "1",
      CMS_GC_GRACE_SECONDS: "5",
    };
    const instance = blocks.get("instance")!;
    const readingTheReplica = `${blocks.get("replica-reads")!}${instance}`;
    // Started together on a fresh database: both migrate it and claim the prefix at the same moment.
    [a, b] = await Promise.all([
      spawnServer(vars, { command: "sh", args: ["-c", instance] }),
      spawnServer({ ...vars, DB_READ_URL: replicaUrl }, { command: "sh", args: ["-c", readingTheReplica] }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await lb?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("the document's readiness check passes through the load balancer", async () => {
    const { code, output } = await runBlockToEnd(blocks.get("check")!, vars);
    expect(code, output).toBe(0);
    expect(JSON.parse(output)).toMatchObject({ status: "ok" });
  });

  /** `read`'s status once it is `expected`, or its last status after the replica's lag bound (10 s). */
  async function statusOnceSettled(read: () => Promise<Response>, expected: number): Promise<number> {
    for (const deadline = Date.now() + 10_000; ; await sleep(50)) {
      const { status } = await read();
      if (status === expected || Date.now() > deadline) return status;
    }
  }

  it("lifecycle across instances: created on A, read on B, updated on B, read on A, deleted on A, gone on both", async () => {
    const [onA, onB] = [on(a, "life"), on(b, "life")];
    const created = await onA.create({ resourceName: "page.txt" }, "version one");
    expect(new TextDecoder().decode(await onB.data(created.resourceURI))).toBe("version one");
    const lock = await onB.lock(created.resourceUID, "Editor");
    const updated = await onB.post("updateResource", { ...lock, resourceBinary: base64("version two") });
    expect(updated.status, await updated.clone().text()).toBe(200);
    expect(new TextDecoder().decode(await onA.data(created.resourceURI))).toBe("version two");
    const deleted = await onA.post("deleteResource", lock);
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    // A at once (its own write); B reads the replica, which may show the row for its replication lag
    // (src/metadata/read-replica.ts, docs/scale-out.md §4): gone there once the lag has passed.
    expect((await onA.get(`getData/${created.resourceURI}`)).status).toBe(404);
    expect(await statusOnceSettled(() => onB.get(`getData/${created.resourceURI}`), 404)).toBe(404);
  });

  it("20 creates alternating between the instances are each readable on the other at once", async () => {
    const [onA, onB] = [on(a, "seen"), on(b, "seen")];
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? onA : onB).create({ resourceName: `c${i}.txt` }, `content ${i}`)),
    );
    const reads = await Promise.all(
      created.map(async (r, i) => new TextDecoder().decode(await (i % 2 ? onB : onA).data(r.resourceURI))),
    );
    expect(reads).toEqual(created.map((_, i) => `content ${i}`));
  });

  it("lock race: of 20 concurrent lock requests on both instances exactly one wins", async () => {
    const created = await on(a, "locks").create({ resourceName: "contended.txt" });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        on(i % 2 ? a : b, "locks").post("lockResourceDTO", { resourceUID: created.resourceUID, author: `racer${i}` }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(423)]);
  });

  it("quota race: a limit of 10 resources holds under 40 concurrent creates on both instances", async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        on(i % 2 ? a : b, "quota10").postCreate({ resourceName: `q${i}.txt` }, `quota ${i}`),
      ),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 507)).toHaveLength(30);
    const listed = await (await on(b, "quota10").get("listResources?tenant=quota10&limit=200")).json();
    expect((listed as { resources: unknown[] }).resources).toHaveLength(10);
  });

  it("tus through the round-robin balancer: creation and PATCHes land on both instances, one resource results", async () => {
    const { Upload } = await import("tus-js-client");
    const bytes = randomBytes(200 * 1024);
    const before = lb.served.length;
    const body = await new Promise<string>((resolve, reject) => {
      new Upload(bytes, {
        endpoint: `${lb.url}${API}/uploads`,
        chunkSize: 64 * 1024,
        metadata: { tenant: "tus", filename: "rr.bin", author: "Balanced" },
        onError: reject,
        onSuccess: (payload) => resolve(payload.lastResponse.getBody() as string),
      }).start();
    });
    const created = JSON.parse(body) as { sha256: string; size: number; resourceURI: string };
    expect(created).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    const patches = lb.served.slice(before).filter((s) => s.startsWith("PATCH"));
    expect(patches).toHaveLength(4);
    expect(new Set(patches).size).toBe(2); // both instances took PATCHes of the one upload
    for (const server of [a, b]) expect(sha256(await on(server, "tus").data(created.resourceURI))).toBe(created.sha256);
    expect(await rgwObjectKeys(rgw, BUCKET, `${PREFIX}tus/`)).toEqual([]);
  });

  it("purge on one instance: gone on both, its blob removed from the bucket", async () => {
    const content = randomBytes(3000);
    const created = await on(a, "purge").create({ resourceName: "purged.bin" }, content);
    const purged = await on(b, "purge").post("purgeResource", { resourceUID: created.resourceUID });
    // The purge's own collection or a background pass (every second here) removes the blob: whichever is first.
    const answer = (await purged.json()) as { purged: string[]; blobsRemoved: number };
    expect(answer.purged).toEqual([created.resourceUID]);
    expect(answer.blobsRemoved).toBeLessThanOrEqual(1);
    expect((await on(a, "purge").get(`getData/${created.resourceURI}`)).status).toBe(404);
    // B reads the replica: gone there once its replication lag has passed.
    expect(await statusOnceSettled(() => on(b, "purge").get(`getData/${created.resourceURI}`), 404)).toBe(404);
    // Removed by the purge, or else by the next collector pass (every second, grace 5 s).
    const prefix = PREFIX + (await tenantPrefix("purge"));
    let left: string[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(200)) {
      left = (await rgwObjectKeys(rgw, BUCKET, prefix)).filter((k) => k.endsWith(sha256(content)));
      if (left.length === 0 || answer.blobsRemoved === 1) break;
    }
    expect(left).toEqual([]);
  });

  it("two collectors at once, with purges and re-creates of the same bytes racing: no blob lost, none leaked", async () => {
    const tenant = "gc";
    const contents = Array.from({ length: 16 }, () => randomBytes(2000));
    const first = await Promise.all(
      contents.map((c, i) => on(i % 2 ? a : b, tenant).create({ resourceName: `g${i}.bin` }, c)),
    );
    // Purge the even ones on both instances while the same bytes are created again for half of them.
    const [, again] = await Promise.all([
      Promise.all(
        first
          .filter((_, i) => i % 2 === 0)
          .map((r, j) => on(j % 2 ? a : b, tenant).post("purgeResource", { resourceUID: r.resourceUID })),
      ),
      Promise.all(
        contents
          .filter((_, i) => i % 4 === 0)
          .map((c, j) => on(j % 2 ? b : a, tenant).create({ resourceName: `again${j}.bin` }, c)),
      ),
    ]);
    const kept = [...first.filter((_, i) => i % 2 === 1), ...again];
    // Both collectors pass every second (grace 5 s): wait until the bucket holds exactly the kept content.
    const prefix = PREFIX + (await tenantPrefix(tenant));
    const expected = [...new Set(kept.map((r) => r.sha256))].sort();
    let stored: string[] = [];
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(500)) {
      stored = (await rgwObjectKeys(rgw, BUCKET, prefix)).map((k) => k.slice(-64)).sort();
      if (stored.join() === expected.join()) break;
    }
    expect(stored).toEqual(expected); // none leaked (and none of the kept ones deleted)
    for (const r of kept) {
      for (const server of [a, b]) expect(sha256(await on(server, tenant).data(r.resourceURI))).toBe(r.sha256);
    }
  });

  it("the document's replica follows the primary: rows written through the instances are readable there", async () => {
    const created = await on(a, "replica").create({ resourceName: "followed.txt" }, "on the replica");
    const client = createClient({ url: replicaUrl });
    try {
      let rows = 0;
      for (const deadline = Date.now() + 10_000; rows === 0 && Date.now() < deadline; await sleep(100)) {
        const result = await client.execute({
          sql: "select count(*) as n from resources where uid = ?",
          args: [created.resourceUID],
        });
        rows = Number(result.rows[0]?.n);
      }
      expect(rows).toBe(1);
    } finally {
      client.close();
    }
  });
});
