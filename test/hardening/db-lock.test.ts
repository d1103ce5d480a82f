/**
 * Suite 3 of issue 11: database lock contention. A second process holds SQLite's write lock on the
 * service's database file (what another instance sharing the file does) while this test measures
 * reads — /healthz, getData, queryResource, listResources — and sends writes. Reads must stay fast
 * (p99 < 50 ms: nothing on the read path waits for the write lock, and no waiting write blocks the
 * event loop); writes wait up to CMS_DB_BUSY_TIMEOUT_MS, then answer 503 DATABASE_BUSY with
 * Retry-After and leave no blob behind; a write arriving while the lock is held succeeds once it
 * lifts, and so does the first write after it.
 */
import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Client, cmsClient, expectProblem, volumeFiles } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { holdWriteLock } from "../helpers/write-lock-holder.js";
import { report, scaled } from "./scale.js";

const HOLD_MS = scaled(2_500, 10_000);
const BUSY_TIMEOUT_MS = scaled(1_000, 5_000);
const EARLY_WRITES = scaled(4, 16);
const TENANT = "dblock";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

    const holder = await holdWriteLock(app.databaseUrl.slice("file:".length), HOLD_MS);
    const lockedAt = performance.now();

    // Writes that arrive at once: they wait the whole bound, then give up.
    const early = Array.from({ length: EARLY_WRITES }, (_, i) => {
      const content = `early write ${i} ${Math.random()}`;
      return timed(() => cms.postCreate({ resourceName: `early-${i}.txt` }, content)).then((r) => ({ ...r, content }));
    });
    // A write that arrives shortly before the lock lifts: it waits less than the bound and succeeds.
    const late = sleep(HOLD_MS - BUSY_TIMEOUT_MS / 2).then(() => timed(() => cms.postCreate({ resourceName: "late.txt" }, "late write")));

    const latencies: number[] = [];
    const failedReads: string[] = [];
    while (performance.now() - lockedAt < HOLD_MS - 100) {
      for (const [name, read] of reads) {
        const { value: res, ms } = await timed(read);
        await res.arrayBuffer();
        latencies.push(ms);
        if (res.status !== 200) failedReads.push(`${name}: ${res.status}`);
      }
    }
    await holder.released;
    const afterLock = await timed(() => cms.postCreate({ resourceName: "after.txt" }, "first write after the lock"));

    expect(failedReads).toEqual([]);
    const sorted = [...latencies].sort((a, b) => a - b);
    const p99 = percentile(sorted, 99);

    const earlyResults = await Promise.all(early);
    for (const { value: res, ms } of earlyResults) {
      const problem = await expectProblem(res, 503, "DATABASE_BUSY");
      expect(problem.detail).toMatch(/database/i);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(ms).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS * 0.9);
      expect(ms).toBeLessThan(BUSY_TIMEOUT_MS + 1_000);
    }
    const lateResult = await late;
    expect(lateResult.value.status, await lateResult.value.clone().text()).toBe(201);
    expect(afterLock.value.status, await afterLock.value.clone().text()).toBe(201);

    // A refused create keeps none of its bytes: no blob named by its content's hash.
    const files = (await volumeFiles(app)).join("\n");
    for (const { content } of earlyResults) expect(files).not.toContain(sha256(content));
    expect(files).toContain(sha256("late write"));

    report("db-lock", {
      holdMs: HOLD_MS,
      busyTimeoutMs: BUSY_TIMEOUT_MS,
      reads: latencies.length,
      readP50Ms: percentile(sorted, 50).toFixed(1),
      readP99Ms: p99.toFixed(1),
      readMaxMs: (sorted.at(-1) ?? 0).toFixed(1),
      writes503: earlyResults.length,
      lateWriteMs: lateResult.ms.toFixed(0),
      firstWriteAfterLockMs: afterLock.ms.toFixed(0),
    });
    expect(p99).toBeLessThan(50);
  });

  it("writes again at once after a refused write (no statement left in progress by SQLITE_BUSY)", async () => {
    const holder = await holdWriteLock(app.databaseUrl.slice("file:".length), BUSY_TIMEOUT_MS + 500);
    await expectProblem(await cms.postCreate({ resourceName: "refused.txt" }, "refused"), 503, "DATABASE_BUSY");
    await holder.released;
    // Both kinds of write: batches (create) and single statements (lock, unlock).
    for (let i = 0; i < 3; i++) {
      const created = await cms.create({ resourceName: `next-${i}.txt` }, `next ${i}`);
      const locked = await cms.lock(created.resourceUID);
      const unlocked = await cms.post("unlockResourceDTO", locked);
      expect(unlocked.status, await unlocked.clone().text()).toBe(204);
    }
  });
});
