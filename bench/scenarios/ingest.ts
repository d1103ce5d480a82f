/**
 * Scenario 3: ingest. createResource of distinct 1 MiB objects from the loopback nginx origin,
 * against a bare Node server doing `fetch → file` of the same bytes (plain, and "durable": also
 * SHA-256, fsync and rename, which is what the service must do). Plus one 1 GiB ingest (peak RSS).
 */
import { mkdirSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import path from "node:path";
import { type Context, createResource, logTail, startApp, startBare } from "../lib/context.js";
import { table } from "../lib/measure.js";
import type { Server } from "../lib/proc.js";
import type { Report } from "../lib/report.js";
import { MiB, fmt, fmtRatio, fmtSummary, interleave, log, summarize } from "../lib/util.js";

export interface IngestResult {
  objects: number;
  elapsedSec: number;
  objectsPerSec: number;
  mbps: number;
  peakRssMiB: number;
  /** RSS just before the measured requests (after start-up and warm-up), MiB. */
  rssBeforeMiB: number;
  serverCpu: number;
  failures: number;
}

const body = (uri: string, tenant: string, name: string) =>
  JSON.stringify({
    resourceAuthor: "bench",
    resourceExternalURI: uri,
    resourceMediaType: "application/octet-stream",
    resourceName: name,
    resourceTenantId: tenant,
  });

/** POSTs every body with `concurrency` keep-alive connections; counts non-201 answers as failures. */
export async function postAll(
  url: string,
  bodies: string[],
  concurrency: number,
): Promise<{ elapsedSec: number; failures: number; firstError?: string }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  let failures = 0;
  let firstError: string | undefined;
  const post = (payload: string) =>
    new Promise<void>((resolve) => {
      const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          if (res.statusCode !== 201) {
            failures += 1;
            firstError ??= `${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 200)}`;
          }
          resolve();
        });
      });
      req.setTimeout(600_000, () => req.destroy(new Error("timeout")));
      req.on("error", (err) => {
        failures += 1;
        firstError ??= err.message;
        resolve();
      });
      req.end(payload);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) await post(bodies[next++] as string);
    }),
  );
  const elapsedSec = (performance.now() - started) / 1000;
  agent.destroy();
  return { elapsedSec, failures, firstError };
}

type Kind = "app" | "app@base" | "ref-plain" | "ref-durable" | "ref-durable+row";

async function startIngestServer(ctx: Context, kind: Kind, dir: string): Promise<Server> {
  mkdirSync(dir, { recursive: true });
  // Ingest rates are low, so the service's log goes to a file (and explains failures).
  if (isApp(kind)) {
    const data = { volume: path.join(dir, "volume"), database: path.join(dir, "cms.db") };
    return startApp(ctx, { runtime: "node", baseline: kind === "app@base" }, data, path.join(dir, "app.log"));
  }
  const durable = kind === "ref-durable" || kind === "ref-durable+row";
  const rows: Record<string, string> = kind === "ref-durable+row" ? { INGEST_DB: path.join(dir, "objects.db") } : {};
  return startBare(
    ctx,
    "node",
    { BARE_MODE: "ingest", INGEST_DIR: dir, INGEST_DURABLE: durable ? "1" : "0", ...rows },
    kind,
  );
}

const isApp = (kind: Kind) => kind === "app" || kind === "app@base";
const postUrl = (server: Server, kind: Kind) => `${server.url}${isApp(kind) ? "/cms/v1.0/createResource" : "/ingest"}`;

export async function ingest(ctx: Context, report: Report): Promise<void> {
  const { fixtures, options } = ctx;
  const concurrency = 4;
  const count = fixtures.ingestCount;
  // The same for every server. After 16 objects the app still spent ≈ 15 % more CPU per object on
  // the measured batch than after 128 (its JIT was still at work: 14.8–16.7 against 11.9–14.2 ms),
  // so the rate was partly a warm-up's. 64 objects: the fixtures' 32 spare ones, each in two tenants.
  const warmup = 64;
  const spare = 32;
  const kinds: Kind[] = [
    "app",
    ...(ctx.baseline ? (["app@base"] as const) : []),
    "ref-plain",
    "ref-durable",
    "ref-durable+row",
  ];
  const results = new Map<Kind, IngestResult[]>(kinds.map((k) => [k, []]));
  log(
    `scenario 3/6: ingest ${count} × 1 MiB, ${concurrency} concurrent, ${kinds.length} servers × ${options.runs} runs`,
  );
  await interleave(kinds, options.runs, async (kind, run) => {
    const dir = path.join(ctx.work, "ingest", `${kind}-${run}`);
    const server = await startIngestServer(ctx, kind, dir);
    try {
      const origin = (i: number) => `${ctx.nginx.url}/ingest/o-${i}.bin`;
      // Warm-up on objects the measured batch does not use (the JIT, the origin connection path).
      const warm = await postAll(
        postUrl(server, kind),
        Array.from({ length: warmup }, (_, i) =>
          body(origin(count + (i % spare)), `w${run}-${Math.floor(i / spare)}`, "w.bin"),
        ),
        concurrency,
      );
      if (warm.failures)
        throw new Error(`${kind}: warm-up failed: ${warm.firstError}\n${logTail(path.join(dir, "app.log"))}`);
      const rssBeforeMiB = server.rss() / MiB;
      server.resetPeak();
      const cpuBefore = server.cpuSeconds();
      const measured = await postAll(
        postUrl(server, kind),
        Array.from({ length: count }, (_, i) => body(origin(i), `r${run}`, `o-${i}.bin`)),
        concurrency,
      );
      const serverCpu = (server.cpuSeconds() - cpuBefore) / measured.elapsedSec;
      if (measured.failures)
        throw new Error(
          `${kind}: ${measured.failures} failures, first: ${measured.firstError}\n${logTail(path.join(dir, "app.log"))}`,
        );
      const result: IngestResult = {
        objects: count,
        elapsedSec: measured.elapsedSec,
        objectsPerSec: count / measured.elapsedSec,
        mbps: (count * fixtures.ingestSize) / measured.elapsedSec / 1e6,
        peakRssMiB: server.peakRss() / MiB,
        rssBeforeMiB,
        serverCpu,
        failures: measured.failures,
      };
      (results.get(kind) as IngestResult[])[run] = result;
      log(
        `  run ${run + 1} ${kind.padEnd(12)} ${fmt(result.objectsPerSec)} objects/s  ${fmt(result.mbps)} MB/s  cpu ${fmt(serverCpu, 2)}  peak RSS ${fmt(result.peakRssMiB)} MiB`,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  report.raw.ingest = Object.fromEntries(results);

  // One huge object (1 GiB; 256 MiB with --quick): time and peak RSS, app vs plain fetch → file.
  const hugeKinds: Kind[] = ["app", "ref-plain"];
  const huge = new Map<Kind, IngestResult[]>(hugeKinds.map((k) => [k, []]));
  const hugeMiB = fixtures.huge.size / MiB;
  log(`scenario 3/6: one ${hugeMiB} MiB ingest, ${hugeKinds.length} servers × ${options.runs} runs`);
  await interleave(hugeKinds, options.runs, async (kind, run) => {
    const dir = path.join(ctx.work, "ingest", `huge-${kind}-${run}`);
    const server = await startIngestServer(ctx, kind, dir);
    try {
      const rssBeforeMiB = server.rss() / MiB;
      server.resetPeak();
      const cpuBefore = server.cpuSeconds();
      const started = performance.now();
      if (isApp(kind)) {
        await createResource(
          server.url,
          `${ctx.nginx.url}/${fixtures.huge.name}`,
          "huge.bin",
          `h${run}`,
          path.join(dir, "app.log"),
        );
      } else {
        const r = await postAll(
          postUrl(server, kind),
          [body(`${ctx.nginx.url}/${fixtures.huge.name}`, "h", "huge.bin")],
          1,
        );
        if (r.failures) throw new Error(`${kind}: ${r.firstError}`);
      }
      const elapsedSec = (performance.now() - started) / 1000;
      const result: IngestResult = {
        objects: 1,
        elapsedSec,
        objectsPerSec: 1 / elapsedSec,
        mbps: fixtures.huge.size / elapsedSec / 1e6,
        peakRssMiB: server.peakRss() / MiB,
        rssBeforeMiB,
        serverCpu: (server.cpuSeconds() - cpuBefore) / elapsedSec,
        failures: 0,
      };
      (huge.get(kind) as IngestResult[])[run] = result;
      log(
        `  run ${run + 1} ${kind.padEnd(12)} ${fmt(elapsedSec)} s  ${fmt(result.mbps)} MB/s  peak RSS ${fmt(result.peakRssMiB)} MiB`,
      );
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  report.raw.ingestHuge = Object.fromEntries(huge);

  const perRun = (a: IngestResult[] | undefined, b: IngestResult[] | undefined, pick: (r: IngestResult) => number) =>
    summarize((a ?? []).map((x, i) => (b?.[i] ? pick(x) / pick(b[i] as IngestResult) : Number.NaN)));
  const s = (kind: Kind, pick: (r: IngestResult) => number, from = results) =>
    summarize((from.get(kind) ?? []).map(pick));

  // Issue 12: the durable reference does what the service must (hash, fsync, rename); plain is context.
  report.check(
    "3 ingest",
    "app: 1 MiB objects/s vs durable fetch → sha256 → fsync → rename",
    perRun(results.get("app"), results.get("ref-durable"), (r) => r.objectsPerSec),
    fmtRatio,
    "≥ 0.9×",
    (m) => m >= 0.9,
  );
  report.check(
    "3 ingest",
    "app: 1 MiB objects/s vs durable blob + one durable row (SQLite WAL, group fsync)",
    perRun(results.get("app"), results.get("ref-durable+row"), (r) => r.objectsPerSec),
    fmtRatio,
    "(context: the floor under the app)",
    null,
  );
  const againstBase = results.has("app@base")
    ? perRun(results.get("app"), results.get("app@base"), (r) => r.objectsPerSec)
    : null;
  if (againstBase)
    report.delta(
      "ingest 1 MiB objects/s: `app` / `app@base`",
      againstBase,
      `today's build against ${ctx.baseline?.ref}'s, per round`,
      fmtRatio,
    );
  report.check(
    "3 ingest",
    "app: 1 MiB objects/s vs plain fetch → file",
    perRun(results.get("app"), results.get("ref-plain"), (r) => r.objectsPerSec),
    fmtRatio,
    "(context: no hash, no fsync)",
    null,
  );
  report.check(
    "3 ingest",
    `app: peak RSS during one ${hugeMiB} MiB ingest`,
    s("app", (r) => r.peakRssMiB, huge),
    (x) => `${fmtSummary(x)} MiB`,
    "< 150 MiB",
    (m) => m < 150,
  );
  report.check(
    "3 ingest",
    "app: RSS before that ingest (idle after start)",
    s("app", (r) => r.rssBeforeMiB, huge),
    (x) => `${fmtSummary(x)} MiB`,
    "(context: the baseline)",
    null,
  );

  const rows = kinds.map((k) => [
    `\`${k}\``,
    fmtSummary(s(k, (r) => r.objectsPerSec)),
    fmtSummary(s(k, (r) => r.mbps)),
    fmtSummary(
      s(k, (r) => r.serverCpu),
      2,
    ),
    fmtSummary(s(k, (r) => r.rssBeforeMiB)),
    fmtSummary(s(k, (r) => r.peakRssMiB)),
  ]);
  const hugeRows = hugeKinds.map((k) => [
    `\`${k}\``,
    fmtSummary(s(k, (r) => r.elapsedSec, huge)),
    fmtSummary(s(k, (r) => r.mbps, huge)),
    fmtSummary(
      s(k, (r) => r.serverCpu, huge),
      2,
    ),
    fmtSummary(s(k, (r) => r.rssBeforeMiB, huge)),
    fmtSummary(s(k, (r) => r.peakRssMiB, huge)),
  ]);
  report.section(
    "3. Ingest (createResource from a loopback origin)",
    [
      `${count} distinct 1 MiB objects per run, ${concurrency} requests in flight (keep-alive), origin: the same nginx on 127.0.0.1.`,
      `Each run starts a fresh server on an empty volume/database (and warms it up with ${warmup} other objects first).`,
      "`app` is the service as shipped (`node dist/node/server.mjs`, built by scripts/build.mjs); `app@base`, when",
      "given (`--baseline=<git ref>`), the same built from that commit.",
      "`ref-plain` is a bare node:http server doing `fetch(uri)` → `stream.pipeline` → `fs.createWriteStream`;",
      "`ref-durable` also hashes (SHA-256), fsyncs and renames into place — the minimum work of a crash-safe store;",
      "`ref-durable+row` then also commits one row per object to a SQLite WAL database and fsyncs the WAL (group",
      "commit, as the service does) — the least a store does that must never lose an acknowledged record.",
      "The service additionally validates the request, creates fan-out directories and inserts the database rows.",
      "",
      table(["server", "objects/s", "MB/s", "server CPU (cores)", "RSS before MiB", "peak RSS MiB"], rows),
      "",
      table(
        ["what", "objects/s ratio"],
        [
          [
            "`app` / `ref-plain`",
            fmtRatio(perRun(results.get("app"), results.get("ref-plain"), (r) => r.objectsPerSec)),
          ],
          [
            "`app` / `ref-durable`",
            fmtRatio(perRun(results.get("app"), results.get("ref-durable"), (r) => r.objectsPerSec)),
          ],
          [
            "`app` / `ref-durable+row`",
            fmtRatio(perRun(results.get("app"), results.get("ref-durable+row"), (r) => r.objectsPerSec)),
          ],
          [
            "`ref-durable` / `ref-plain`",
            fmtRatio(perRun(results.get("ref-durable"), results.get("ref-plain"), (r) => r.objectsPerSec)),
          ],
          [
            "`ref-durable+row` / `ref-durable`",
            fmtRatio(perRun(results.get("ref-durable+row"), results.get("ref-durable"), (r) => r.objectsPerSec)),
          ],
          ...(againstBase
            ? [
                ["`app` / `app@base`", fmtRatio(againstBase)],
                [
                  "`app@base` / `ref-durable`",
                  fmtRatio(perRun(results.get("app@base"), results.get("ref-durable"), (r) => r.objectsPerSec)),
                ],
              ]
            : []),
        ],
      ),
      "",
      `One ${hugeMiB} MiB object (fresh server per run; peak RSS is VmHWM from just before the request to its 201):`,
      "",
      table(["server", "seconds", "MB/s", "server CPU (cores)", "RSS before MiB", "peak RSS MiB"], hugeRows),
      "",
      `\`app\` / \`ref-plain\` MB/s: ${fmtRatio(perRun(huge.get("app"), huge.get("ref-plain"), (r) => r.mbps))}`,
    ].join("\n"),
  );
}
