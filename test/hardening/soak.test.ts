// Suite 6 (issue 11 §4): a bounded mixed workload — create, read, range, query, update under a
// lock, delete under a lock — against the server as shipped (its own process, fs volume, libSQL
// file) on 127.0.0.1. First the capacity is measured closed-loop, then the soak runs open-loop at
// 80 % of it. Figures: error rate, p99 per window, RSS and open file descriptors of the server
// process over time, their slopes. Short in `npm test`, 30 min under HARDENING=full; SOAK_SECONDS
// overrides the soak's length.
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { FULL, report, scaled } from "./scale.js";

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? scaled(12, 1800));
const CAPACITY_SECONDS = scaled(3, 20);
const SAMPLE_EVERY_MS = scaled(1000, 10_000);
const MAX_IN_FLIGHT = 64;
const TENANT = "soak";
const AUTHOR = "Soak Author";

let dir: string;
let server: ServerProcess;
let base: URL;
const serverComplaints: string[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });

interface Answer {
  status: number;
  body: Buffer;
}

/** One request over the shared keep-alive agent; the body is read whole (the workload's are small). */
function call(
  method: string,
  path: string,
  options: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
    const req = http.request(
      {
        agent,
        method,
        host: base.hostname,
        port: base.port,
        path: `/cms/v1.0/${path}`,
        headers: {
          ...options.headers,
          ...(payload ? { "content-type": "application/json", "content-length": payload.length } : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("no answer within 30 s")));
    req.on("error", reject);
    req.end(payload);
  });
}

const expectStatus = (what: string, answer: Answer, status: number) => {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
  return answer;
};

// ---------------------------------------------------------------------------------------------
// The workload. Reads and ranges go to a stable set nobody changes; updates and deletes take a
// resource the workload created out of its pool while they work on it, so no two operations ever
// contend and every answer has exactly one right status.

interface Stable {
  uri: string;
  size: number;
}
const stable: Stable[] = [];
const pool: string[] = [];

async function create(size: number): Promise<{ resourceUID: string; resourceURI: string }> {
  const answer = await call("POST", "createResource", {
    json: {
      resourceAuthor: AUTHOR,
      resourceBinary: randomBytes(size).toString("base64"),
      resourceMediaType: "application/octet-stream",
      resourceName: "blob.bin",
      resourceTenantId: TENANT,
    },
  });
  return JSON.parse(expectStatus("createResource", answer, 201).body.toString());
}

async function underLock(uid: string, work: (lockID: string) => Promise<void>, unlock: boolean) {
  const locked = JSON.parse(
    expectStatus(
      "lockResourceDTO",
      await call("POST", "lockResourceDTO", { json: { resourceUID: uid, author: AUTHOR } }),
      200,
    ).body.toString(),
  );
  await work(locked.lockID);
  if (unlock)
    expectStatus(
      "unlockResourceDTO",
      await call("POST", "unlockResourceDTO", { json: { resourceUID: uid, author: AUTHOR, lockID: locked.lockID } }),
      204,
    );
}

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)] as T;

const OPS: [string, number, () => Promise<void>][] = [
  [
    "read",
    40,
    async () => {
      const r = pick(stable);
      const answer = expectStatus("getData", await call("GET", `getData/${r.uri}`), 200);
      if (answer.body.length !== r.size) throw new Error(`getData: ${answer.body.length} bytes, expected ${r.size}`);
    },
  ],
  [
    "range",
    20,
    async () => {
      const r = pick(stable);
      const start = Math.floor(Math.random() * (r.size - 100));
      const answer = expectStatus(
        "range",
        await call("GET", `getData/${r.uri}`, { headers: { range: `bytes=${start}-${start + 99}` } }),
        206,
      );
      if (answer.body.length !== 100) throw new Error(`range: ${answer.body.length} bytes`);
    },
  ],
  [
    "create",
    15,
    async () => {
      pool.push((await create(1024 + Math.floor(Math.random() * 7 * 1024))).resourceUID);
    },
  ],
  [
    "query",
    10,
    async () => {
      if (Math.random() < 0.5)
        expectStatus("listResources", await call("GET", `listResources?resourceTenantId=${TENANT}&limit=20`), 200);
      else
        expectStatus(
          "queryResource",
          await call("POST", "queryResource", { json: { queryUID: pick(stable).uri.split("/")[0] } }),
          200,
        );
    },
  ],
  [
    "update",
    10,
    async () => {
      const uid = pool.shift();
      if (!uid) return void pool.push((await create(2048)).resourceUID);
      await underLock(
        uid,
        async (lockID) => {
          const json = {
            resourceUID: uid,
            author: AUTHOR,
            lockID,
            resourceBinary: randomBytes(3000).toString("base64"),
          };
          expectStatus("updateResource", await call("POST", "updateResource", { json }), 200);
        },
        true,
      );
      pool.push(uid);
    },
  ],
  [
    "delete",
    5,
    async () => {
      const uid = pool.shift();
      if (!uid) return void pool.push((await create(2048)).resourceUID);
      await underLock(
        uid,
        async (lockID) =>
          void expectStatus(
            "deleteResource",
            await call("POST", "deleteResource", { json: { resourceUID: uid, author: AUTHOR, lockID } }),
            200,
          ),
        false,
      );
    },
  ],
];
const TOTAL_WEIGHT = OPS.reduce((n, [, w]) => n + w, 0);

function nextOp(): [string, () => Promise<void>] {
  let roll = Math.random() * TOTAL_WEIGHT;
  for (const [name, weight, run] of OPS) {
    roll -= weight;
    if (roll < 0) return [name, run];
  }
  const [name, , run] = OPS[0] as (typeof OPS)[number];
  return [name, run];
}

// ---------------------------------------------------------------------------------------------
// Measurements of the server process.

async function processFigures(pid: number) {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { rssMiB: rssKb / 1024, fds };
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

interface Tally {
  ops: number;
  errors: string[];
  latencies: number[];
  /** Latencies by operation, for the figures. */
  byOp?: Record<string, number[]>;
}

/** Runs one operation and records it. */
async function runOne(tally: Tally) {
  const [name, run] = nextOp();
  const started = performance.now();
  try {
    await run();
  } catch (err) {
    tally.errors.push(`${name}: ${(err as Error).message}`);
  }
  const ms = performance.now() - started;
  tally.ops++;
  tally.latencies.push(ms);
  if (tally.byOp) (tally.byOp[name] ??= []).push(ms);
}

/** Closed loop: `concurrency` workers as fast as they go, for `seconds`; operations per second. */
async function measureCapacity(seconds: number, concurrency: number): Promise<{ opsPerSecond: number; tally: Tally }> {
  const tally: Tally = { ops: 0, errors: [], latencies: [] };
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) await runOne(tally);
    }),
  );
  return { opsPerSecond: tally.ops / seconds, tally };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-soak-"));
  server = await spawnServer({
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    // A small blob cache fills during the warm-up, so a flat RSS afterwards means no leak, not a cache still growing.
    CMS_BLOB_CACHE_BYTES: String(8 * 1024 * 1024),
  });
  base = new URL(server.url);
  // The server logs every request (as in production); this process keeps only its warnings and
  // errors, so a failed request shows what the server saw.
  server.child.stdout?.removeAllListeners("data");
  let partial = "";
  server.child.stdout?.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (/"level":"(warn|error)"/.test(line)) serverComplaints.push(line.slice(0, 2000));
  });
  // Stable content: small (served from the cache) and past the cache's entry size (streamed from disk).
  for (const size of [2048, 4096, 16_384, 100_000, 300_000, 1_000_000]) {
    const created = await create(size);
    stable.push({ uri: created.resourceURI, size });
  }
  for (let i = 0; i < 20; i++) pool.push((await create(2048)).resourceUID);
});

afterAll(async () => {
  agent.destroy();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("soak: mixed workload at 80 % of capacity", () => {
  it(
    `${SOAK_SECONDS} s without errors, with flat RSS and file descriptors`,
    async () => {
      const pid = server.child.pid as number;
      const idle = await processFigures(pid);
      await measureCapacity(1, 16); // warm-up: JIT, SQLite pages, the blob cache
      const capacity = await measureCapacity(CAPACITY_SECONDS, 16);
      expect(capacity.tally.errors.slice(0, 5)).toEqual([]);
      const rate = Math.max(1, Math.floor(capacity.opsPerSecond * 0.8));

      // Open loop: arrivals on a fixed schedule, whatever the answers do; at most MAX_IN_FLIGHT at once.
      const tally: Tally = { ops: 0, errors: [], latencies: [], byOp: {} };
      const samples: { t: number; rssMiB: number; fds: number; p99: number; ops: number; errors: number }[] = [];
      let inFlight = 0;
      let shed = 0;
      let windowStart = 0;
      let windowErrors = 0;
      const running = new Set<Promise<void>>();
      const started = performance.now();
      const end = started + SOAK_SECONDS * 1000;
      let nextSample = started + SAMPLE_EVERY_MS;
      for (let i = 0; ; i++) {
        const due = started + (i * 1000) / rate;
        if (due >= end) break;
        const wait = due - performance.now();
        if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
        if (inFlight >= MAX_IN_FLIGHT) {
          shed++;
        } else {
          inFlight++;
          const p = runOne(tally).finally(() => {
            inFlight--;
            running.delete(p);
          });
          running.add(p);
        }
        if (performance.now() >= nextSample) {
          const window = tally.latencies.slice(windowStart).sort((a, b) => a - b);
          const figures = await processFigures(pid);
          samples.push({
            t: (performance.now() - started) / 1000,
            ...figures,
            p99: percentile(window, 0.99),
            ops: window.length,
            errors: tally.errors.length - windowErrors,
          });
          windowStart = tally.latencies.length;
          windowErrors = tally.errors.length;
          nextSample += SAMPLE_EVERY_MS;
        }
      }
      await Promise.all(running);
      const elapsed = (performance.now() - started) / 1000;

      // Leak check for descriptors: once the client's connections are gone and the blob files kept
      // open for hot reads have idled out (≤ 4 s, src/storage/drivers/fs/open-files.ts), the server is
      // back to idle. A leaked descriptor never comes back, so waiting up to 8 s still catches it.
      agent.destroy();
      let after = await processFigures(pid);
      for (
        const deadline = performance.now() + 8000;
        after.fds > idle.fds + 2 && performance.now() < deadline;
        after = await processFigures(pid)
      ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }

      // The first fifth is warm-up (JIT, caches, SQLite pages); slopes are taken over the rest.
      const steady = samples.slice(Math.floor(samples.length / 5));
      const rssSlope = slope(steady.map((s) => ({ x: s.t / 60, y: s.rssMiB })));
      const fdSlope = slope(steady.map((s) => ({ x: s.t / 60, y: s.fds })));
      const sorted = [...tally.latencies].sort((a, b) => a - b);
      const p99s = samples.map((s) => s.p99);
      report("soak", {
        seconds: elapsed.toFixed(0),
        capacity_ops_s: capacity.opsPerSecond.toFixed(0),
        rate_ops_s: rate,
        ops: tally.ops,
        shed,
        errors: tally.errors.length,
        error_rate: (tally.errors.length / Math.max(1, tally.ops)).toFixed(5),
        p50_ms: percentile(sorted, 0.5).toFixed(1),
        p99_ms: percentile(sorted, 0.99).toFixed(1),
        p99_window_min_ms: Math.min(...p99s).toFixed(1),
        p99_window_max_ms: Math.max(...p99s).toFixed(1),
        rss_idle_MiB: idle.rssMiB.toFixed(1),
        rss_first_MiB: (steady[0]?.rssMiB ?? 0).toFixed(1),
        rss_last_MiB: (samples.at(-1)?.rssMiB ?? 0).toFixed(1),
        rss_slope_MiB_min: rssSlope.toFixed(2),
        fds_idle: idle.fds,
        fds_max: Math.max(...samples.map((s) => s.fds)),
        fds_after: after.fds,
        fd_slope_per_min: fdSlope.toFixed(2),
        ...Object.fromEntries(
          Object.entries(tally.byOp ?? {}).map(([op, ms]) => [
            `${op}_p99_ms`,
            percentile(
              ms.sort((a, b) => a - b),
              0.99,
            ).toFixed(0),
          ]),
        ),
      });
      if (FULL)
        console.log(
          `[hardening] soak windows ${JSON.stringify(samples.map((s) => [Math.round(s.t), Math.round(s.rssMiB), s.fds, Math.round(s.p99), s.ops, s.errors]))}`,
        );

      // `shed` (arrivals dropped while MAX_IN_FLIGHT were pending) is reported, not asserted: on a
      // shared machine the measured capacity moves, and shedding is the generator's, not the server's.
      expect({ errors: tally.errors.slice(0, 5), server: serverComplaints.slice(0, 5) }).toEqual({
        errors: [],
        server: [],
      });
      // No descriptor leak: every socket, file and blob handle of the workload was closed.
      expect(after.fds).toBeLessThanOrEqual(idle.fds + 2);
      if (FULL) {
        // Flat memory over the steady state: under 1 MiB/min, i.e. < 24 MiB over the 24 steady minutes.
        expect(rssSlope).toBeLessThan(1);
      } else {
        // A short run cannot tell a slope from warm-up; it catches gross leaks only.
        expect(samples.at(-1)?.rssMiB ?? 0).toBeLessThan(idle.rssMiB + 256);
      }
    },
    (SOAK_SECONDS + CAPACITY_SECONDS + 120) * 1000,
  );
});
