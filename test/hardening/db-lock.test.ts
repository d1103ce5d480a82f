/**
 * Suite 3 of issue 11: database lock contention. A second process holds SQLite's write lock on the
 * service's database file (what another instance sharing the file does) while this test measures
 * reads — /healthz, getData, queryResource, listResources — and sends writes. Reads must stay fast
 * (p99 < 50 ms: nothing on the read path waits for the write lock, and no waiting write blocks the
 * event loop); writes wait up to CMS_DB_BUSY_TIMEOUT_MS, then answer 503 DATABASE_BUSY with
 * Retry-After and leave no blob behind; a write arriving while the lock is held succeeds once it
 * lifts, and so does the first write after it. The test lifts the lock itself once the early writes
 * have answered (no timer decides when), while reads go on. Then two server processes share one database file
 * and write at once: they take turns for the lock, and every create lands.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Client, cmsClient, expectProblem, volumeFiles } from "../helpers/cms-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { holdWriteLock } from "../helpers/write-lock-holder.js";
import { FULL, report, scaled } from "./scale.js";

const BUSY_TIMEOUT_MS = scaled(1_000, 5_000);
const EARLY_WRITES = scaled(4, 16);
const TENANT = "dblock";
const BASELINE_MS = scaled(1_000, 5_000);
const P99_LIMIT_MS = 50;
const TWO_INSTANCE_WRITES = scaled(100, 2_000);
const CONCURRENT = 8;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

describe("database lock contention with a second process holding the write lock", () => {
  let app: TestApp;
  let cms: Client;

  beforeAll(async () => {
    app = await startTestApp({ CMS_DB_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS), CMS_LOG_LEVEL: "warn" });
    cms = cmsClient(app, TENANT);
  });
  afterAll(() => app?.close());
  afterEach(() => expect(app.unhandledErrors()).toEqual([]));

  it("keeps reads fast, answers waiting writes 503 + Retry-After after the bound, and writes again once the lock lifts", async () => {
    const seeded = await cms.create({ resourceName: "seed.txt" }, "seeded content");
    const reads: [string, () => Promise<Response>][] = [
      ["healthz", () => fetch(app.url("/healthz"))],
      ["getData", () => cms.get(`getData/${seeded.resourceURI}`)],
      ["queryResource", () => cms.post("queryResource", { queryUID: seeded.resourceUID })],
      ["listResources", () => cms.get(`listResources?resourceTenantId=${TENANT}`)],
    ];

    /** Reads round-robin while `more()` says so; their latencies, and any non-200 answer. */
    const readWhile = async (more: () => boolean) => {
      const latencies: number[] = [];
      const failed: string[] = [];
      while (more()) {
        for (const [name, read] of reads) {
          const { value: res, ms: took } = await timed(read);
          await res.arrayBuffer();
          latencies.push(took);
          if (res.status !== 200) failed.push(`${name}: ${res.status}`);
        }
      }
      return { sorted: latencies.sort((a, b) => a - b), failed };
    };
    /** Reads for about `ms`: a measuring window, every turn of it a request. */
    const readFor = (ms: number) => {
      const until = performance.now() + ms;
      return readWhile(() => performance.now() < until);
    };
    /** Reads until `done` settles. */
    const readUntil = (done: Promise<unknown>) => {
      let settled = false;
      const over = () => {
        settled = true;
      };
      done.then(over, over);
      return readWhile(() => !settled);
    };
    // The same reads without the lock: what this machine gives right now (other suites run beside this one).
    const baseline = await readFor(BASELINE_MS);

    const holder = await holdWriteLock(app.databaseUrl.slice("file:".length));
    const heldFrom = performance.now();
    // Writes that arrive at once: they wait the whole bound, then give up.
    const early = Array.from({ length: EARLY_WRITES }, (_, i) => {
      const content = `early write ${i} ${Math.random()}`;
      return timed(() => cms.postCreate({ resourceName: `early-${i}.txt` }, content)).then((r) => ({ ...r, content }));
    });
    const whileEarly = await readUntil(Promise.all(early));
    // A write that arrives while the lock is still held: it waits (reads go on for a quarter of the bound),
    // then the lock lifts and it succeeds well within the bound.
    const late = timed(() => cms.postCreate({ resourceName: "late.txt" }, "late write"));
    const whileLate = await readFor(BUSY_TIMEOUT_MS / 4);
    await holder.release();
    const heldMs = performance.now() - heldFrom;
    const afterLock = await timed(() => cms.postCreate({ resourceName: "after.txt" }, "first write after the lock"));
    const during = {
      sorted: [...whileEarly.sorted, ...whileLate.sorted].sort((a, b) => a - b),
      failed: [...whileEarly.failed, ...whileLate.failed],
    };

    expect([...baseline.failed, ...during.failed]).toEqual([]);
    const p99 = percentile(during.sorted, 99);
    const baselineP99 = percentile(baseline.sorted, 99);

    const earlyResults = await Promise.all(early);
    for (const { value: res, ms } of earlyResults) {
      const problem = await expectProblem(res, 503, "DATABASE_BUSY");
      expect(problem.detail).toMatch(/database/i);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(ms).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS * 0.9);
      // Given up at the bound, not at the lock's release; 2 s of slack for a loaded machine's timers.
      expect(ms).toBeLessThan(BUSY_TIMEOUT_MS + 2_000);
    }
    const lateResult = await late;
    expect(lateResult.value.status, await lateResult.value.clone().text()).toBe(201);
    expect(afterLock.value.status, await afterLock.value.clone().text()).toBe(201);

    // A refused create keeps none of its bytes: no blob named by its content's hash.
    const files = (await volumeFiles(app)).join("\n");
    for (const { content } of earlyResults) expect(files).not.toContain(sha256(content));
    expect(files).toContain(sha256("late write"));

    report("db-lock", {
      holdMs: heldMs.toFixed(0),
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      reads: during.sorted.length,
      readP50Ms: percentile(during.sorted, 50).toFixed(1),
      readP99Ms: p99.toFixed(1),
      readMaxMs: (during.sorted.at(-1) ?? 0).toFixed(1),
      baselineReads: baseline.sorted.length,
      baselineP99Ms: baselineP99.toFixed(1),
      writes503: earlyResults.length,
      lateWriteMs: lateResult.ms.toFixed(0),
      firstWriteAfterLockMs: afterLock.ms.toFixed(0),
    });
    // A blocked event loop shows as reads taking as long as the writes wait (≥ the bound).
    expect(during.sorted.at(-1)).toBeLessThan(BUSY_TIMEOUT_MS / 2);
    // The promise is p99 < 50 ms. The quick run shares the machine with the rest of `npm test`, so
    // there it may instead show that the lock does not slow reads beyond what the machine gives.
    if (FULL) expect(p99).toBeLessThan(P99_LIMIT_MS);
    // Loose (4× + 50 ms): the two windows are seconds apart on a machine whose load swings; the
    // maximum above is what shows a read waiting for the lock.
    else
      expect(p99 < P99_LIMIT_MS || p99 < 4 * baselineP99 + 50, `p99 ${p99} ms, baseline ${baselineP99} ms`).toBe(true);
  });

  it("declares 503 on every write in the OpenAPI document", async () => {
    const doc = (await (await fetch(app.url("/openapi.json"))).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const verb of [
      "createResource",
      "uploadResource",
      "updateResource",
      "deleteResource",
      "purgeResource",
      "lockResourceDTO",
      "unlockResource",
    ]) {
      expect(Object.keys(doc.paths[`/cms/v1.0/${verb}`]?.post?.responses ?? {}), verb).toContain("503");
    }
  });

  it("writes again at once after a refused write (no statement left in progress by SQLITE_BUSY)", async () => {
    const holder = await holdWriteLock(app.databaseUrl.slice("file:".length));
    await expectProblem(await cms.postCreate({ resourceName: "refused.txt" }, "refused"), 503, "DATABASE_BUSY");
    await holder.release();
    // Both kinds of write: batches (create) and single statements (lock, unlock).
    for (let i = 0; i < 3; i++) {
      const created = await cms.create({ resourceName: `next-${i}.txt` }, `next ${i}`);
      const locked = await cms.lock(created.resourceUID);
      const unlocked = await cms.post("unlockResourceDTO", locked);
      expect(unlocked.status, await unlocked.clone().text()).toBe(204);
    }
  });
});

describe("two instances writing to one database file at once", () => {
  let dir: string;
  let servers: ServerProcess[];
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-dblock-two-"));
    const env = { CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`, CMS_VOLUME: join(dir, "volume") };
    servers = [await spawnServer(env), await spawnServer(env)];
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await rm(dir, { recursive: true, force: true });
  });

  it("takes turns for the write lock: every create lands", async () => {
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    const started = performance.now();
    // Each instance gets CONCURRENT writers that send their creates one after another.
    await Promise.all(
      servers.flatMap((server, s) =>
        Array.from({ length: CONCURRENT }, async (_, w) => {
          for (let i = w; i < TWO_INSTANCE_WRITES; i += CONCURRENT) {
            const { value: res, ms } = await timed(() =>
              fetch(`${server.url}/cms/v1.0/createResource`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({
                  resourceAuthor: "A",
                  resourceMediaType: "text/plain",
                  resourceName: `s${s}-${i}.txt`,
                  resourceTenantId: TENANT,
                  resourceBinary: Buffer.from(`instance ${s} write ${i}`).toString("base64"),
                }),
              }),
            );
            await res.arrayBuffer();
            statuses[res.status] = (statuses[res.status] ?? 0) + 1;
            latencies.push(ms);
          }
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const sorted = latencies.sort((a, b) => a - b);
    report("db-lock-two-instances", {
      creates: sorted.length,
      perSecond: (sorted.length / seconds).toFixed(0),
      createP50Ms: percentile(sorted, 50).toFixed(1),
      createP99Ms: percentile(sorted, 99).toFixed(1),
      createMaxMs: (sorted.at(-1) ?? 0).toFixed(1),
      statuses: JSON.stringify(statuses),
    });
    // No 503: with the default bound (5 s), turns of a few milliseconds never add up to a refusal.
    expect(statuses).toEqual({ 201: 2 * TWO_INSTANCE_WRITES });
  });
});
