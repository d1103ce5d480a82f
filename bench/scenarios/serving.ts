/**
 * Scenarios 1, 2 and 6: serving through getData on Node and Bun, against nginx (the machine's
 * practical limit) and bare runtime servers (the runtime's own limit), all interleaved.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import {
  type AppVariant,
  type Context,
  type Created,
  appName,
  createResource,
  getDataPath,
  sliceSha256,
  startApp,
  startBare,
  verifyAll,
} from "../lib/context.js";
import {
  type Sample,
  type WrkTarget,
  fmtRatio,
  measureInterleaved,
  metric,
  ratio,
  table,
  wrkTable,
} from "../lib/measure.js";
import { startNginx } from "../lib/nginx.js";
import { type Server, startServer } from "../lib/proc.js";
import type { Report } from "../lib/report.js";
import { KiB, fmtSummary, http, log } from "../lib/util.js";
import { rangeLua } from "../lib/wrk.js";

interface ServeData {
  volume: string;
  database: string;
  small: Created;
  large: Created;
  /** The service's head for a plain GET of the small resource, and for a 64 KiB range of the large one (APP_HEAD of the "+head" references). */
  smallHead: string;
  rangeHead: string;
}

/** Fields of every answer (date, length, range) or of one (the request id): the bare servers set their own. */
const PER_ANSWER = new Set(["date", "content-length", "content-range", "x-request-id", "connection", "keep-alive"]);

/** The head the service sends for `url`, less the per-answer fields, as APP_HEAD for a bare server. */
async function headOf(url: string, range?: string): Promise<string> {
  const res = await http(url, { headers: range ? { range } : {} });
  return JSON.stringify(
    Object.fromEntries(
      Object.entries(res.headers).filter(([name, value]) => !PER_ANSWER.has(name) && typeof value === "string"),
    ),
  );
}

let serveData: ServeData | null = null;

/** One volume + database holding the 4 KiB and 256 MiB resources, shared by every app server (read-only use). */
export async function prepareServeData(ctx: Context): Promise<ServeData> {
  if (serveData) return serveData;
  const dir = path.join(ctx.work, "serve");
  mkdirSync(dir, { recursive: true });
  const data = { volume: path.join(dir, "volume"), database: path.join(dir, `cms-${Date.now()}.db`) };
  const logFile = path.join(dir, "prepare.log");
  const app = await startApp(ctx, { runtime: "node" }, data, logFile);
  try {
    const small = await createResource(
      app.url,
      `${ctx.nginx.url}/${ctx.fixtures.small.name}`,
      "small.bin",
      "bench",
      logFile,
    );
    const large = await createResource(
      app.url,
      `${ctx.nginx.url}/${ctx.fixtures.large.name}`,
      "large.bin",
      "bench",
      logFile,
    );
    const smallHead = await headOf(`${app.url}${getDataPath(small.resourceURI)}`);
    const rangeHead = await headOf(`${app.url}${getDataPath(large.resourceURI)}`, "bytes=0-65535");
    serveData = { ...data, small, large, smallHead, rangeHead };
    return serveData;
  } finally {
    await app.stop();
  }
}

function appVariants(ctx: Context, variants: AppVariant[]): AppVariant[] {
  return variants.filter((v) => v.runtime === "node" || ctx.bun !== null);
}

/** With `--baseline`: the shipped Node and Bun service of that commit, measured in the same rounds (`app@base`, `bun-app@base`). */
function baselineVariants(ctx: Context): AppVariant[] {
  return ctx.baseline
    ? appVariants(ctx, [
        { runtime: "node", baseline: true },
        { runtime: "bun", baseline: true },
      ])
    : [];
}

/** Today's build against the baseline's, per round, for each runtime measured (`--baseline`). */
function baselineDeltas(
  ctx: Context,
  report: Report,
  samples: Map<string, Sample[]>,
  what: string,
  pick: (s: Sample) => number,
) {
  if (!ctx.baseline) return;
  for (const name of ["app", "bun-app"]) {
    if (!samples.has(name) || !samples.has(`${name}@base`)) continue;
    report.delta(
      `${what}: \`${name}\` / \`${name}@base\``,
      ratio(samples.get(name), samples.get(`${name}@base`), pick),
      `today's build against ${ctx.baseline.ref}'s (${ctx.baseline.commit}), per round`,
      fmtRatio,
    );
  }
}

/**
 * Starts each server once, one at a time (start-up is CPU-heavy and the machine has 2 cores), and
 * keeps how: `restart(name)` is what starts another process of it, for a fresh process per round
 * (measure.ts). Every process started either way is in `servers`, for the final stop.
 */
async function startAll(starters: (() => Promise<Server>)[]) {
  const servers: Server[] = [];
  const startOf = new Map<string, () => Promise<Server>>();
  try {
    for (const start of starters) {
      const server = await start();
      servers.push(server);
      startOf.set(server.name, start);
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  const restart = (name: string) => {
    const start = startOf.get(name) as () => Promise<Server>;
    return async () => {
      const server = await start();
      servers.push(server);
      return server;
    };
  };
  /** A target served by the server `name` at `path`, measured in a fresh process each round. */
  const target = (name: string, path: string, as = name): WrkTarget => {
    const server = [...servers].reverse().find((s) => s.name === name) as Server; // its latest process
    return { name: as, url: `${server.url}${path}`, server, restart: restart(name) };
  };
  return { servers, has: (name: string) => startOf.has(name), target };
}

const pickRps = (s: Sample) => s.rps;
const pickMbps = (s: Sample) => s.mbps;

/** Ratio table rows: each `[numerator, denominator]` pair, per run. */
function ratioTable(
  samples: Map<string, Sample[]>,
  pairs: [string, string][],
  pick: (s: Sample) => number,
  unit: string,
): string {
  const rows = pairs
    .filter(([a, b]) => samples.has(a) && samples.has(b))
    .map(([a, b]) => [`\`${a}\` / \`${b}\``, fmtRatio(ratio(samples.get(a), samples.get(b), pick))]);
  return table(["what", `${unit} ratio`], rows);
}

export async function smallFiles(ctx: Context, report: Report): Promise<void> {
  const data = await prepareServeData(ctx);
  const { small } = ctx.fixtures;
  const variants = appVariants(ctx, [
    { runtime: "node" },
    { runtime: "node", logLevel: "warn" },
    { runtime: "node", noCache: true },
    { runtime: "node", metrics: true },
    { runtime: "bun" },
    { runtime: "bun", logLevel: "warn" },
    { runtime: "bun", noCache: true },
    { runtime: "bun", metrics: true },
    ...baselineVariants(ctx),
  ]);
  log("scenario 1/6: small files (4 KiB) — starting servers");
  const { servers, has, target } = await startAll([
    () => startBare(ctx, "node", { BARE_MODE: "mem", FILE: small.path }, "node-mem"),
    () => startBare(ctx, "node", { BARE_MODE: "mem", FILE: small.path, APP_HEAD: data.smallHead }, "node-mem+head"),
    () => startBare(ctx, "node", { BARE_MODE: "fs", FILE: small.path }, "node-fs"),
    () => startNginx({ name: "nginx+log", root: ctx.fixtures.dir, workDir: ctx.work, accessLog: true }),
    () =>
      startServer({
        name: "hono-static",
        command: process.execPath,
        args: [path.join(ctx.root, "bench/servers/hono-static.mjs")],
        cwd: ctx.root,
        env: { STATIC_ROOT: ctx.fixtures.dir },
      }),
    ...(ctx.bun
      ? [
          () => startBare(ctx, "bun", { BARE_MODE: "mem", FILE: small.path }, "bun-mem"),
          () => startBare(ctx, "bun", { BARE_MODE: "mem", FILE: small.path, APP_HEAD: data.smallHead }, "bun-mem+head"),
        ]
      : []),
    ...variants.map((v) => () => startApp(ctx, v, data)),
  ]);
  try {
    const appPath = getDataPath(data.small.resourceURI);
    const targets: WrkTarget[] = [
      { name: "nginx", url: `${ctx.nginx.url}/${small.name}`, server: ctx.nginx },
      target("nginx+log", `/${small.name}`),
      target("node-mem", "/f"),
      target("node-mem+head", "/f"),
      target("node-fs", "/f"),
      target("hono-static", `/${small.name}`),
      ...(has("bun-mem") ? [target("bun-mem", "/f"), target("bun-mem+head", "/f")] : []),
      ...variants.map((v) => target(appName(v), appPath)),
    ];
    const checked = await verifyAll(targets, { sha256: small.sha256 });
    log(`scenario 1/6: measuring ${checked.passed.length} servers × ${ctx.options.runs} runs`);
    const samples = await measureInterleaved(checked.passed, {
      connections: 64,
      durationSec: ctx.options.duration,
      warmupSec: ctx.options.warmup,
      runs: ctx.options.runs,
      workDir: ctx.work,
    });
    report.raw.smallFiles = Object.fromEntries(samples);

    baselineDeltas(ctx, report, samples, "small files req/s", pickRps);
    const pairs: [string, string][] = [];
    for (const v of variants) {
      const name = appName(v);
      if (v.baseline) {
        pairs.push([name.replace("@base", ""), name]);
        continue;
      }
      if (v.runtime === "node")
        pairs.push([name, "node-mem"], [name, "node-mem+head"], [name, "hono-static"], [name, "nginx"]);
      else pairs.push([name, "nginx"], [name, "bun-mem"], [name, "bun-mem+head"]);
      if (!v.logLevel && !v.noCache) pairs.push([name, "nginx+log"]);
    }
    pairs.push(["nginx+log", "nginx"]);
    pairs.push(["node-mem+head", "node-mem"], ["bun-mem+head", "bun-mem"], ["bun-mem+head", "nginx"]);
    pairs.push(["node-mem", "nginx"], ["node-fs", "nginx"], ["hono-static", "nginx"], ["bun-mem", "nginx"]);

    for (const [name, label] of [["app", "app (as shipped)"]] as const) {
      if (!samples.has(name)) continue;
      // Issue 12's target. 0.8× is out of reach: an inline handler doing none of the service's work
      // (no lookup, log or RFC 9110 answer) reached ≈ 0.65× of bare node:http in the same minute.
      report.check(
        "1 small files",
        `${label}: req/s vs bare in-memory Node`,
        ratio(samples.get(name), samples.get("node-mem"), pickRps),
        fmtRatio,
        "≥ 0.6×",
        (m) => m >= 0.6,
      );
      report.check(
        "1 small files",
        `${label}: req/s vs hono serveStatic`,
        ratio(samples.get(name), samples.get("hono-static"), pickRps),
        fmtRatio,
        "≥ 2×",
        (m) => m >= 2,
      );
      // The floor: what the runtime alone does when it sends the same head.
      report.check(
        "1 small files",
        `${label}: req/s vs bare in-memory Node sending the app's head`,
        ratio(samples.get(name), samples.get("node-mem+head"), pickRps),
        fmtRatio,
        "(context: the floor under the app)",
        null,
      );
      report.check(
        "1 small files",
        "bare in-memory Node: with the app's head / without",
        ratio(samples.get("node-mem+head"), samples.get("node-mem"), pickRps),
        fmtRatio,
        "(context: what the head costs)",
        null,
      );
    }
    for (const [name, label] of [["bun-app", "Bun app (as shipped)"]] as const) {
      if (!samples.has(name)) continue;
      report.check(
        "6 Bun",
        `${label}: small-file req/s vs nginx`,
        ratio(samples.get(name), samples.get("nginx"), pickRps),
        fmtRatio,
        "≥ 1.0× (issue 12)",
        (m) => m >= 1.0,
      );
      report.check(
        "6 Bun",
        `${label}: small-file req/s vs bare Bun.serve sending the app's head`,
        ratio(samples.get(name), samples.get("bun-mem+head"), pickRps),
        fmtRatio,
        "(context: the floor under the app)",
        null,
      );
      // nginx logs nothing above: the same comparison with the access log on both sides, and off on both.
      report.check(
        "6 Bun",
        `${label}: small-file req/s vs nginx writing the same JSON access log`,
        ratio(samples.get(name), samples.get("nginx+log"), pickRps),
        fmtRatio,
        "(context: both log)",
        null,
      );
      report.check(
        "6 Bun",
        "Bun app without its access log (`bun-app@warn`): small-file req/s vs nginx",
        ratio(samples.get("bun-app@warn"), samples.get("nginx"), pickRps),
        fmtRatio,
        "(context: neither logs)",
        null,
      );
    }

    const rpsRatio = (a: string, b: string) => ratio(samples.get(a), samples.get(b), pickRps);
    // Issue 27: counting every request for GET /metrics must cost the hot path no more than a few percent.
    for (const app of ["app", "bun-app"]) {
      if (!samples.has(`${app}+metrics`)) continue;
      report.delta(
        `small files req/s, ${app === "app" ? "Node" : "Bun"}: \`${app}+metrics\` / \`${app}\``,
        rpsRatio(`${app}+metrics`, app),
        "metrics on (CMS_METRICS_ENABLED=true) vs off",
        fmtRatio,
      );
    }
    report.delta(
      "small files req/s, Node: `app` / `app-nocache`",
      rpsRatio("app", "app-nocache"),
      "the small-blob cache (CMS_BLOB_CACHE_BYTES > 0)",
      fmtRatio,
    );
    report.delta(
      "small files p99, Node: `app` / `app-nocache`",
      ratio(samples.get("app"), samples.get("app-nocache"), (x) => x.p99Ms),
      "the small-blob cache (lower is better)",
      fmtRatio,
    );
    report.delta(
      "small files req/s, Node: `app@warn` / `app`",
      rpsRatio("app@warn", "app"),
      "no access-log line (CMS_LOG_LEVEL=warn)",
      fmtRatio,
    );
    report.delta(
      "small files req/s, Bun: `bun-app@warn` / `bun-app`",
      rpsRatio("bun-app@warn", "bun-app"),
      "no access-log line (CMS_LOG_LEVEL=warn)",
      fmtRatio,
    );
    report.delta(
      "small files req/s, nginx: `nginx` / `nginx+log`",
      rpsRatio("nginx", "nginx+log"),
      "no access-log line",
      fmtRatio,
    );
    report.delta(
      "small files req/s, Bun: `bun-app` / `bun-app-nocache`",
      rpsRatio("bun-app", "bun-app-nocache"),
      "the small-blob cache",
      fmtRatio,
    );
    report.section(
      "1. Small files (4 KiB) through getData — and 6. the same on Bun",
      [
        `64 keep-alive connections, ${ctx.options.duration} s per run, GET of one 4 KiB file. \`app\` is the real service as shipped (\`node dist/node/server.mjs\`, built by scripts/build.mjs,`,
        "default log level `info`: one JSON access-log line per request, written to /dev/null); `app@warn` is the same with",
        "`CMS_LOG_LEVEL=warn` (no access log) to show the log's cost (`bun-app@warn` on Bun); `nginx+log` is nginx",
        "writing a JSON line of the same fields per request (64 KiB buffer, /dev/null); `-nocache` is the same with the small-blob",
        "cache switched off (`CMS_BLOB_CACHE_BYTES=0`) to show what the cache gains.",
        "",
        checked.note,
        wrkTable(samples, {
          nginx: "nginx 1 worker, sendfile, file opened per request",
          "nginx+log": "the same nginx, with a JSON access log",
          "node-mem": "bare node:http, bytes in memory",
          "node-fs": "bare node:http, fs.createReadStream per request",
          "hono-static": "@hono/node-server serveStatic",
          "bun-mem": "bare Bun.serve, bytes in memory",
          "node-mem+head": "bare node:http, bytes in memory, with the app's head fields",
          "bun-mem+head": "bare Bun.serve, bytes in memory, with the app's head fields",
          app: "the service, Node",
          "app@warn": "the service, Node, no access log",
          "app-nocache": "the service, Node, blob cache off",
          "bun-app": "the service, Bun",
          "bun-app@warn": "the service, Bun, no access log",
          "bun-app-nocache": "the service, Bun, blob cache off",
        }),
        "",
        ratioTable(samples, pairs, pickRps, "req/s"),
      ].join("\n"),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

export async function largeFile(ctx: Context, report: Report): Promise<void> {
  const data = await prepareServeData(ctx);
  const { large } = ctx.fixtures;
  const variants = [...appVariants(ctx, [{ runtime: "node" }, { runtime: "bun" }]), ...baselineVariants(ctx)];
  // Ranges only: the service without its access log, against the bare servers, which log nothing either.
  const quiet = appVariants(ctx, [
    { runtime: "node", logLevel: "warn" },
    { runtime: "bun", logLevel: "warn" },
  ]);
  log("scenario 2/6: large file (256 MiB) — starting servers");
  const { servers, has, target } = await startAll([
    () => startBare(ctx, "node", { BARE_MODE: "fs", FILE: large.path }, "node-stream"),
    () => startBare(ctx, "node", { BARE_MODE: "fs", FILE: large.path, APP_HEAD: data.rangeHead }, "node-range+head"),
    ...(ctx.bun
      ? [
          () => startBare(ctx, "bun", { BARE_MODE: "file", FILE: large.path }, "bun-file"),
          () =>
            startBare(ctx, "bun", { BARE_MODE: "file", FILE: large.path, APP_HEAD: data.rangeHead }, "bun-range+head"),
        ]
      : []),
    ...[...variants, ...quiet].map((v) => () => startApp(ctx, v, data)),
  ]);
  try {
    const appPath = getDataPath(data.large.resourceURI);
    const full: WrkTarget[] = [
      { name: "nginx", url: `${ctx.nginx.url}/${large.name}`, server: ctx.nginx },
      target("node-stream", "/f"),
      ...(has("bun-file") ? [target("bun-file", "/f")] : []),
      ...variants.map((v) => target(appName(v), appPath)),
    ];
    const checkedFull = await verifyAll(full, { sha256: large.sha256 });
    log(`scenario 2/6: full downloads, ${checkedFull.passed.length} servers × ${ctx.options.runs} runs`);
    const downloads = await measureInterleaved(checkedFull.passed, {
      connections: 1,
      durationSec: ctx.options.duration + 2,
      warmupSec: ctx.options.warmup,
      runs: ctx.options.runs,
      timeoutSec: 120,
      workDir: ctx.work,
    });
    report.raw.largeFile = Object.fromEntries(downloads);

    // Range-heavy: random 64 KiB ranges, the same seeded sequence for every server; the bare
    // servers also with the app's head (the floor under the app: what the runtime does with it).
    const probe = { start: 123_457, end: 123_457 + 64 * KiB - 1 };
    const bareRanges = { "node-stream": "node-range", "bun-file": "bun-range" } as Record<string, string>;
    const checkedRanges = await verifyAll(
      [
        ...full.map((t) => (t.name in bareRanges ? target(t.name, "/f", bareRanges[t.name]) : { ...t })),
        target("node-range+head", "/f"),
        ...(has("bun-range+head") ? [target("bun-range+head", "/f")] : []),
        ...quiet.map((v) => target(appName(v), appPath)),
      ],
      {
        sha256: sliceSha256(large.path, probe.start, probe.end),
        status: 206,
        range: `bytes=${probe.start}-${probe.end}`,
      },
    );
    log(`scenario 2/6: random 64 KiB ranges, ${checkedRanges.passed.length} servers × ${ctx.options.runs} runs`);
    const ranges = await measureInterleaved(checkedRanges.passed, {
      connections: 64,
      durationSec: ctx.options.duration,
      warmupSec: ctx.options.warmup,
      runs: ctx.options.runs,
      lua: rangeLua(large.size, 64 * KiB),
      workDir: ctx.work,
    });
    report.raw.ranges = Object.fromEntries(ranges);
    baselineDeltas(ctx, report, downloads, "256 MiB download MB/s", pickMbps);
    baselineDeltas(ctx, report, ranges, "random 64 KiB ranges req/s", pickRps);

    report.check(
      "2 large file",
      "app: MB/s vs bare Node stream",
      ratio(downloads.get("app"), downloads.get("node-stream"), pickMbps),
      fmtRatio,
      "≥ 0.9×",
      (m) => m >= 0.9,
    );
    report.check(
      "2 large file",
      "app: peak RSS while streaming 256 MiB",
      metric(downloads.get("app"), (s) => s.peakRssMiB),
      (s) => `${fmtSummary(s)} MiB`,
      "< 100 MiB",
      (m) => m < 100,
    );
    report.check(
      "2 large file",
      "app: RSS before streaming (idle, after warm-up)",
      metric(downloads.get("app"), (s) => s.rssBeforeMiB),
      (s) => `${fmtSummary(s)} MiB`,
      "(context: the baseline)",
      null,
    );
    report.check(
      "2 large file",
      "app: random 64 KiB ranges, req/s vs bare range stream",
      ratio(ranges.get("app"), ranges.get("node-range"), pickRps),
      fmtRatio,
      "≥ 1.0× bare range stream",
      (m) => m >= 1.0,
    );
    report.check(
      "2 large file",
      "app: random 64 KiB ranges, req/s vs nginx",
      ratio(ranges.get("app"), ranges.get("nginx"), pickRps),
      fmtRatio,
      "(no target; reported)",
      null,
    );
    report.check(
      "2 large file",
      "app: random 64 KiB ranges, req/s vs bare range stream sending the app's head",
      ratio(ranges.get("app"), ranges.get("node-range+head"), pickRps),
      fmtRatio,
      "(context: the floor under the app)",
      null,
    );
    report.check(
      "2 large file",
      "app without its access log (`app@warn`): random 64 KiB ranges, req/s vs bare range stream sending the app's head",
      ratio(ranges.get("app@warn"), ranges.get("node-range+head"), pickRps),
      fmtRatio,
      "(context: neither logs)",
      null,
    );
    if (downloads.has("bun-app")) {
      report.check(
        "6 Bun",
        "Bun app: large-file MB/s vs bare Bun (Bun.file)",
        ratio(downloads.get("bun-app"), downloads.get("bun-file"), pickMbps),
        fmtRatio,
        "(reported)",
        null,
      );
      // Issue 12 (B): ranges answered by Bun.serve with a Bun.file slice (src/runtime/bun/fast-get.ts).
      report.check(
        "6 Bun",
        "Bun app: random 64 KiB ranges, req/s vs nginx",
        ratio(ranges.get("bun-app"), ranges.get("nginx"), pickRps),
        fmtRatio,
        "≥ 0.6× (issue 12)",
        (m) => m >= 0.6,
      );
      report.check(
        "6 Bun",
        "bare Bun.serve (Bun.file slice) sending the app's head: random 64 KiB ranges, req/s vs nginx",
        ratio(ranges.get("bun-range+head"), ranges.get("nginx"), pickRps),
        fmtRatio,
        "(context: Bun's own ceiling)",
        null,
      );
      report.check(
        "6 Bun",
        "Bun app: random 64 KiB ranges, req/s vs bare Bun.serve sending the app's head",
        ratio(ranges.get("bun-app"), ranges.get("bun-range+head"), pickRps),
        fmtRatio,
        "(context: the floor under the app)",
        null,
      );
      report.check(
        "6 Bun",
        "Bun app without its access log (`bun-app@warn`): random 64 KiB ranges, req/s vs bare Bun.serve sending the app's head",
        ratio(ranges.get("bun-app@warn"), ranges.get("bun-range+head"), pickRps),
        fmtRatio,
        "(context: neither logs)",
        null,
      );
      report.check(
        "6 Bun",
        "Bun app: peak RSS while streaming",
        metric(downloads.get("bun-app"), (s) => s.peakRssMiB),
        (s) => `${fmtSummary(s)} MiB`,
        "(no target on Bun; Node's is < 100 MiB)",
        null,
      );
    }
    const fullPairs: [string, string][] = [
      ["app", "node-stream"],
      ["app", "nginx"],
      ["node-stream", "nginx"],
      ["bun-app", "bun-file"],
      ["bun-app", "nginx"],
      ["bun-file", "nginx"],
    ];
    const rangePairs: [string, string][] = [
      ["app", "nginx"],
      ["app", "node-range"],
      ["app", "node-range+head"],
      ["app@warn", "node-range+head"],
      ["app@warn", "app"],
      ["node-range+head", "node-range"],
      ["node-range", "nginx"],
      ["bun-app", "nginx"],
      ["bun-app", "bun-range+head"],
      ["bun-app@warn", "bun-range+head"],
      ["bun-app@warn", "bun-app"],
      ["bun-range+head", "bun-range"],
      ["bun-range", "nginx"],
    ];
    report.section(
      "2. Large file (256 MiB) through getData — and 6. the same on Bun",
      [
        `Full downloads: one connection, back-to-back GETs of the whole 256 MiB file for ${ctx.options.duration + 2} s per run (page cache warm).`,
        "MB/s counts response bytes (10^6 B/s). Peak RSS is the server's VmHWM during the run (reset before each run).",
        "",
        checkedFull.note,
        wrkTable(
          downloads,
          {
            nginx: "nginx, sendfile",
            "node-stream": "bare node:http, fs.createReadStream().pipe(res)",
            "bun-file": "bare Bun.serve, new Response(Bun.file())",
            app: "the service, Node",
            "bun-app": "the service, Bun",
          },
          { mbps: true, rps: false },
        ),
        "",
        ratioTable(downloads, fullPairs, pickMbps, "MB/s"),
        "",
        `Range-heavy (video seeking): 64 connections, each GET asks for a random 64 KiB range of the 256 MiB file (same seeded sequence for every server), ${ctx.options.duration} s per run.`,
        "",
        checkedRanges.note,
        wrkTable(
          ranges,
          {
            nginx: "nginx, sendfile",
            "node-range": "bare node:http, fs.createReadStream({start,end})",
            "node-range+head": "the same, with the app's head fields",
            "bun-range": "bare Bun.serve, Bun.file().slice(start, end + 1)",
            "bun-range+head": "the same, with the app's head fields",
            app: "the service, Node",
            "app@warn": "the service, Node, no access log",
            "bun-app": "the service, Bun",
            "bun-app@warn": "the service, Bun, no access log",
          },
          { mbps: true },
        ),
        "",
        ratioTable(ranges, rangePairs, pickRps, "req/s"),
      ].join("\n"),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
