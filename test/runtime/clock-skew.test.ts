/**
 * Instances on one sqld whose machines disagree on the time: B runs under libfaketime (the Debian
 * `faketime` package, LD_PRELOAD into `node dist/node/server.mjs`) ten minutes ahead, and another B
 * ten minutes behind, each beside A on the true clock. Lock lifetimes, the tus expiry and the
 * collector's grace period are 5 minutes — shorter than the skew — so any rule decided on a machine's
 * own clock breaks: a lock one takes looks expired to the other, a fresh tus upload expired, a fresh
 * reservation abandoned. They must hold: exclusivity, resumability, and no blob within its grace
 * period deleted.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processClient } from "../helpers/process-client.js";
import { parsePromText } from "../helpers/prom-text.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { type Sqld, startSqld } from "../helpers/sqld.js";

const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
type Value = { type: "integer"; value: string } | { type: "text"; value: string };

/** One statement on sqld over Hrana's HTTP pipeline (the test's own view of the database). */
async function query(sqld: Sqld, sql: string, args: Value[] = []): Promise<string[][]> {
  const res = await fetch(`${sqld.url}/v2/pipeline`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql, args } }, { type: "close" }] }),
  });
  const body = (await res.json()) as {
    results: { type: string; error?: unknown; response?: { result: { rows: { value: string }[][] } } }[];
  };
  const first = body.results[0];
  if (first?.type !== "ok") throw new Error(`sqld: ${JSON.stringify(first?.error)}`);
  return (first.response?.result.rows ?? []).map((row) => row.map((cell) => cell.value));
}

/** Collection passes `server` has finished (its /metrics counter). */
async function collectorPasses(server: ServerProcess): Promise<number> {
  const res = await fetch(`${server.url}/metrics`);
  return parsePromText(await res.text()).value("cms_collector_passes_total");
}

const SKEWS = ["+10m", "-10m"] as const;

// One sqld and one instance on the true clock for both skews: B runs once per skew beside them (the
// two skewed collectors then pass over each other's reservations too, which neither may delete).
describe.runIf(existsSync(LIBFAKETIME))("instances whose clocks disagree, on one sqld", () => {
  let dir: string;
  let sqld: Sqld;
  let a: ServerProcess;
  const skewed = new Map<string, ServerProcess>();
  let volume: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-skew-"));
    volume = join(dir, "volume");
    sqld = await startSqld();
    const shared = {
      CMS_VOLUME: volume,
      CMS_DATABASE_URL: sqld.wsUrl,
      CMS_LOCK_TTL: "300",
      CMS_TUS_EXPIRY_SECONDS: "300",
      CMS_GC_GRACE_SECONDS: "300",
    };
    a = await spawnServer({ ...shared, CMS_GC_INTERVAL_SECONDS: "3600" }); // migrates the database first
    // FAKETIME_DONT_FAKE_MONOTONIC: only the wall clock is off, as on a machine whose NTP is.
    const started = await Promise.all(
      SKEWS.map((skew) =>
        spawnServer({
          ...shared,
          CMS_GC_INTERVAL_SECONDS: "1",
          CMS_METRICS_ENABLED: "true", // its collector passes, counted: what the grace-period test awaits
          LD_PRELOAD: LIBFAKETIME,
          FAKETIME: skew,
          FAKETIME_DONT_FAKE_MONOTONIC: "1",
        }),
      ),
    );
    for (const [i, skew] of SKEWS.entries()) skewed.set(skew, started[i] as ServerProcess);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), ...[...skewed.values()].map((server) => server.stop())]);
    await sqld?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (server: ServerProcess, verb: string, body: unknown) => processClient(server, "skew").post(verb, body);
  const create = (server: ServerProcess, name: string, text: string) =>
    processClient(server, "skew").create({ resourceName: name }, text);

  describe.each(SKEWS)("one instance's clock %s off", (skew) => {
    let b: ServerProcess;
    beforeAll(() => {
      b = skewed.get(skew) as ServerProcess;
    });

    it("runs B on the skewed clock (libfaketime works under Node)", async () => {
      const res = await fetch(`${b.url}/healthz`);
      const date = Date.parse(res.headers.get("date") ?? "");
      const expected = (skew.startsWith("+") ? 1 : -1) * 10 * 60_000;
      expect(Math.abs(date - Date.now() - expected)).toBeLessThan(30_000);
    });

    it("keeps a lock exclusive whichever instance took it", async () => {
      for (const [first, second] of [
        [a, b],
        [b, a],
      ] as const) {
        const { resourceUID } = await create(first, "locked.txt", "locked");
        const taken = await post(first, "lockResourceDTO", { resourceUID, author: "first" });
        expect(taken.status, await taken.clone().text()).toBe(200);
        const refused = await post(second, "lockResourceDTO", { resourceUID, author: "second" });
        expect(refused.status, await refused.clone().text()).toBe(423);
      }
    });

    it("keeps a fresh tus upload resumable on both instances", async () => {
      for (const [first, second] of [
        [a, b],
        [b, a],
      ] as const) {
        const created = await fetch(`${first.url}/cms/v1.0/uploads`, {
          method: "POST",
          headers: {
            "tus-resumable": "1.0.0",
            "upload-length": "10",
            "upload-metadata": `tenant ${btoa("skew")},filename ${btoa("t.txt")},author ${btoa("skew")}`,
          },
        });
        expect(created.status, await created.clone().text()).toBe(201);
        const location = created.headers.get("location") as string;
        const head = await fetch(new URL(location, second.url), {
          method: "HEAD",
          headers: { "tus-resumable": "1.0.0" },
        });
        expect(head.status).toBe(200);
        expect(head.headers.get("upload-offset")).toBe("0");
      }
    });
  });

  // Both skews at once: each waits out several collector passes of its B.
  it.concurrent.for(SKEWS)(
    "deletes no blob within its grace period (a create's fresh reservation) in the passes of B %s off",
    { timeout: 30_000 },
    async (skew, { expect }) => {
      const b = skewed.get(skew) as ServerProcess;
      const { resourceUID, sha256 } = await create(a, "reserved.txt", `reserved ${skew}`);
      const [[key] = []] = await query(sqld, "SELECT key FROM blob_ledger WHERE key LIKE ?", [
        { type: "text", value: `%${sha256}` },
      ]);
      expect(key).toBeDefined();
      // Another create of the same content reserves the blob now (on the database's clock, which is the
      // test machine's: sqld runs here); then the resource is purged, so only that reservation keeps it.
      await query(sqld, "UPDATE blob_ledger SET pending = 1, touched_at = ? WHERE key = ?", [
        { type: "integer", value: String(Date.now()) },
        { type: "text", value: key as string },
      ]);
      const purged = await post(a, "purgeResource", { resourceUID });
      expect(purged.status, await purged.clone().text()).toBe(200);
      // Three of B's collector passes, each begun after the purge, have finished (one may have been
      // under way during it: it counts as the first of four).
      const before = await collectorPasses(b);
      await expect
        .poll(() => collectorPasses(b), { timeout: 20_000, interval: 100 })
        .toBeGreaterThanOrEqual(before + 4);
      expect(existsSync(join(volume, key as string))).toBe(true);
      // Still in the ledger and not claimed for deletion.
      const live = "SELECT count(*) FROM blob_ledger WHERE key = ? AND doomed_at IS NULL";
      expect(await query(sqld, live, [{ type: "text", value: key as string }])).toEqual([["1"]]);
    },
  );
});
