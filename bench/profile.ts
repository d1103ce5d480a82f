/**
 * CPU profile of the service under one load, for "a target is missed: what does the profile say?".
 *
 *   node --import tsx bench/profile.ts small  [--nocache] [--norowcache] [--bun | --bundle] [--seconds=8]
 *   node --import tsx bench/profile.ts range | large | ingest [--ref] [--concurrency=4]
 *   node --import tsx bench/profile.ts derivative  [--bundle]   (a cached 320 px WebP: issue 30's fast path)
 *   node --import tsx bench/profile.ts 304  [--bun | --bundle]   (4 KiB GETs with a matching If-None-Match)
 *   node --import tsx bench/profile.ts head  [--bun | --bundle]   (HEAD of the 4 KiB resource, with ab -k -i)
 *   … [--at=<checkout>]   the same load on another checkout's service (`git worktree add`; built there for --bundle)
 *   node --import tsx bench/profile.ts callers <file.cpuprofile> <functionName>   (who calls it, by time)
 *
 * On Node the service runs through tsx (bench/servers/node-entry.ts, see there), not as shipped:
 * every src file and package keeps its own module URL, so self time can be attributed per file.
 * `--bundle` profiles the shipped dist/node/server.mjs (built first by scripts/build.mjs) instead:
 * function names still show, but src and packages share one URL (one bucket; positions are in the
 * bundle), and the figures are those of the code as it runs in production. `ingest --ref` profiles
 * the reference instead (bench/servers/bare-node.mjs as ref-durable+row: durable blob and row), under
 * the same load: both print busy milliseconds per object, so the app's excess shows by bucket.
 *
 * Starts the service with `--cpu-prof` (Node) or `--cpu-prof` (Bun ≥ 1.3 writes the same format),
 * drives it with wrk (or createResource calls for `ingest`), stops it, and prints self time by
 * bucket (our src files, each package, Node internals, GC, idle) and the top functions, plus
 * inclusive time of the src functions. The .cpuprofile stays in bench/.work/profiles/ for DevTools.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createResource, getDataPath, prepareFixtures, shippedServer } from "./lib/context.js";
import { runAbHead } from "./lib/ab.js";
import { startNginx } from "./lib/nginx.js";
import { installExitHooks, startServer, stopAll } from "./lib/proc.js";
import { ensureBun } from "./lib/setup.js";
import { KiB, fmt, http, log } from "./lib/util.js";
import { rangeLua, runWrk } from "./lib/wrk.js";
import { postAll } from "./scenarios/ingest.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function bucketOf(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "(native/builtin)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1] as string;
  if (url.startsWith("node:")) return "node:internal";
  const src = /\/(src|bench)\/(.*)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  const dist = /\/(dist\/.*)$/.exec(url);
  if (dist) return dist[1] as string;
  return url;
}

/** bucket:line:column (tsx-compiled files report positions in the compiled code). */
const where = (f: ProfileNode["callFrame"]) =>
  `${bucketOf(f.url, f.functionName)}${f.url ? `:${f.lineNumber + 1}:${f.columnNumber + 1}` : ""}`;

/** Our own code: src files (through tsx) or the whole server bundle (`--bundle`: src and packages alike). */
const isOwn = (url: string) => /\/src\/|\/dist\/node\//.test(url);

/** Time the profiled thread was not idle, µs. */
function busyMicros(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
  return profile.samples.reduce((sum, id, i) => sum + (idle.has(id) ? 0 : (profile.timeDeltas[i] ?? 0)), 0);
}

export function summarizeProfile(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self]
    .filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)")
    .reduce((a, [, t]) => a + t, 0);
  const busy = total - idle;
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, t] of self) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url } = node.callFrame;
    if (functionName === "(idle)") continue;
    const bucket = bucketOf(url, functionName);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + t);
    const key = `${functionName || "(anonymous)"}  ${where(node.callFrame)}`;
    functions.set(key, (functions.get(key) ?? 0) + t);
  }
  // Inclusive time per src function (counted once per stack, so recursion does not inflate it).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)?.callFrame;
      if (!f || !isOwn(f.url)) continue;
      const key = `${f.functionName || "(anonymous)"}  ${where(f)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + t);
    }
  }
  const pct = (t: number) => `${((100 * t) / busy).toFixed(1).padStart(5)}%`;
  const list = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => `  ${pct(t)}  ${k}`)
      .join("\n");
  return [
    `busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s profiled (percentages are of busy time)`,
    "self time by bucket:",
    list(buckets, 20),
    "top functions (self):",
    list(functions, top),
    profile.nodes.some((n) => /\/dist\/node\//.test(n.callFrame.url))
      ? "bundle functions (inclusive; src and packages alike):"
      : "src functions (inclusive):",
    list(inclusive, 20),
  ].join("\n");
}

/** The heaviest call paths (8 frames up) leading to `name`, with inclusive time. */
export function callers(profile: CpuProfile, name: string, top = 6): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const inclusive = (id: number): number =>
    (self.get(id) ?? 0) + (byId.get(id)?.children ?? []).reduce((sum, c) => sum + inclusive(c), 0);
  const paths = new Map<string, number>();
  for (const n of profile.nodes) {
    if (n.callFrame.functionName !== name) continue;
    const chain: string[] = [];
    for (let cur = parent.get(n.id); cur !== undefined && chain.length < 8; cur = parent.get(cur)) {
      const f = byId.get(cur)?.callFrame;
      if (f) chain.push(`${f.functionName || "(anonymous)"} ${where(f)}`);
    }
    const key = chain.join("\n      < ");
    paths.set(key, (paths.get(key) ?? 0) + inclusive(n.id));
  }
  return [...paths]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, t]) => `${(t / 1000).toFixed(0).padStart(6)} ms  ${name}\n      < ${k}`)
    .join("\n");
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === "callers" && args[1] && args[2]) {
    process.stdout.write(`${callers(JSON.parse(readFileSync(args[1], "utf8")) as CpuProfile, args[2])}\n`);
    return;
  }
  const scenario = args.find((a) => !a.startsWith("--")) ?? "small";
  const noCache = args.includes("--nocache"); // no small-blob memory cache: every blob read from its file
  const noRowCache = args.includes("--norowcache"); // CMS_ROW_CACHE_ROWS=0: every getData looks its row up
  const onBun = args.includes("--bun");
  const bundled = args.includes("--bundle");
  const reference = args.includes("--ref");
  // Another checkout's service under the same load (its own src, or its bundle with --bundle).
  const at = args.find((a) => a.startsWith("--at="))?.split("=")[1];
  const serverRoot = at ? path.resolve(at) : ROOT;
  if (at && !onBun && !bundled) throw new Error("--at goes with --bun or --bundle (tsx runs this checkout's src)");
  if (reference && (scenario !== "ingest" || onBun || bundled))
    throw new Error("--ref profiles the ingest reference on Node; it goes with `ingest` alone");
  if (onBun && bundled)
    throw new Error("--bundle profiles the Node bundle (dist/node/server.mjs); it does not go with --bun");
  const concurrency = Number(args.find((a) => a.startsWith("--concurrency="))?.split("=")[1] ?? 4);
  const seconds = Number(args.find((a) => a.startsWith("--seconds="))?.split("=")[1] ?? 8);
  installExitHooks();
  const work = path.join(ROOT, "bench/.work");
  const profiles = path.join(
    work,
    "profiles",
    `${scenario}${reference ? "-ref" : ""}${noCache ? "-nocache" : ""}${noRowCache ? "-norowcache" : ""}${onBun ? "-bun" : ""}${bundled ? "-bundle" : ""}${at ? `-at-${path.basename(serverRoot)}` : ""}-${Date.now()}`,
  );
  mkdirSync(profiles, { recursive: true });
  const fixtures = prepareFixtures(work, true);
  const nginx = await startNginx({ root: fixtures.dir, workDir: work, name: "profile" });
  const bun = onBun ? ensureBun(ROOT) : null;
  const dataDir = path.join(work, "profile-data");
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const profiling = ["--cpu-prof", `--cpu-prof-dir=${profiles}`];
  const ingestDir = path.join(dataDir, "ingest");
  mkdirSync(ingestDir);
  const server = await startServer({
    name: reference ? "ref-durable+row" : "app",
    command: onBun ? (bun as string) : process.execPath,
    args: reference
      ? [...profiling, "bench/servers/bare-node.mjs"]
      : onBun
        ? [...profiling, "src/bun.ts"]
        : bundled
          ? [...profiling, at ? path.join(serverRoot, "dist/node/server.mjs") : await shippedServer()]
          : [...profiling, "--import", "tsx", path.join(ROOT, "bench/servers/node-entry.ts")],
    cwd: serverRoot,
    env: {
      ...(reference
        ? {
            BARE_MODE: "ingest",
            INGEST_DIR: ingestDir,
            INGEST_DURABLE: "1",
            INGEST_DB: path.join(dataDir, "objects.db"),
          }
        : {}),
      CMS_VOLUME: path.join(dataDir, "volume"),
      CMS_DATABASE_URL: `file:${path.join(dataDir, "cms.db")}`,
      CMS_FETCH_ALLOW_PRIVATE: "true",
      CMS_FETCH_TIMEOUT_MS: "600000",
      CMS_LOG_LEVEL: process.env.CMS_LOG_LEVEL ?? "info",
      ...(noCache ? { CMS_BLOB_CACHE_BYTES: "0" } : {}),
      ...(noRowCache ? { CMS_ROW_CACHE_ROWS: "0" } : {}),
    },
    timeoutMs: 60_000,
  });
  let ingested = 0;
  try {
    if (scenario === "ingest") {
      const bodies = (tenant: string, n: number) =>
        Array.from({ length: n }, (_, i) =>
          JSON.stringify({
            resourceAuthor: "bench",
            resourceExternalURI: `${nginx.url}/ingest/o-${i}.bin`,
            resourceMediaType: "application/octet-stream",
            resourceName: "o.bin",
            resourceTenantId: tenant,
          }),
        );
      await postAll(`${server.url}/cms/v1.0/createResource`, bodies("warm", 16), concurrency);
      // Rounds of distinct objects (a new tenant each round) until `seconds` have passed.
      let objects = 0;
      let elapsed = 0;
      let failures = 0;
      for (let round = 0; elapsed < seconds && round < 100; round++) {
        const r = await postAll(
          `${server.url}/cms/v1.0/createResource`,
          bodies(`measured${round}`, fixtures.ingestCount),
          concurrency,
        );
        objects += fixtures.ingestCount;
        elapsed += r.elapsedSec;
        failures += r.failures;
      }
      ingested = objects + 16;
      log(`ingest: ${fmt(objects / elapsed)} objects/s, ${failures} failures`);
    } else {
      const derivative = scenario === "derivative";
      const file = derivative
        ? await jpegFixture(fixtures.dir)
        : scenario === "small" || scenario === "304" || scenario === "head"
          ? fixtures.small
          : fixtures.large;
      const type = derivative ? "image/jpeg" : undefined;
      const created = await createResource(
        server.url,
        `${nginx.url}/${file.name}`,
        file.name,
        "bench",
        undefined,
        type,
      );
      const url = `${server.url}${getDataPath(created.resourceURI)}${derivative ? "?width=320&format=webp" : ""}`;
      // Made and stored (once libvips has loaded: 503 before): every request below reads it.
      for (let tries = 0; derivative; tries++) {
        const res = await http(url, { timeoutMs: 120_000 });
        if (res.status === 200) break;
        if (tries > 50) throw new Error(`${url}: ${res.status} ${res.body.toString().slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const etag = scenario === "304" ? (await http(url)).headers.etag : undefined;
      const plan =
        scenario === "small" || derivative
          ? { connections: 64 }
          : etag !== undefined
            ? { connections: 64, lua: `wrk.headers["If-None-Match"] = ${JSON.stringify(String(etag))}` }
            : scenario === "range"
              ? { connections: 64, lua: rangeLua(file.size, 64 * KiB) }
              : { connections: 1, timeoutSec: 120 };
      // HEAD: ab, as the bench's `head` kind (wrk waits for a HEAD answer's Content-Length bytes).
      const load = (durationSec: number, cpuSeconds?: () => number) =>
        scenario === "head"
          ? runAbHead({ url, connections: 64, durationSec, cpuSeconds })
          : runWrk({ url, durationSec, workDir: work, cpuSeconds, ...plan });
      await load(2);
      const r = await load(seconds, server.cpuSeconds);
      log(
        `${scenario}: ${fmt(r.rps)} req/s, ${fmt(r.mbps)} MB/s, p50 ${fmt(r.p50Ms)} ms, p99 ${fmt(r.p99Ms)} ms, server CPU ${fmt(r.serverCpu, 2)}`,
      );
    }
  } finally {
    await server.stop();
    await stopAll();
  }
  // tsx's loader thread writes a profile too (not with --bundle); the main thread's is the big one.
  const file = readdirSync(profiles)
    .filter((f) => f.endsWith(".cpuprofile"))
    .sort((a, b) => statSync(path.join(profiles, b)).size - statSync(path.join(profiles, a)).size)[0];
  if (!file) throw new Error(`no .cpuprofile written in ${profiles}`);
  const profile = JSON.parse(readFileSync(path.join(profiles, file), "utf8")) as CpuProfile;
  process.stdout.write(`${summarizeProfile(profile)}\nprofile: ${path.relative(ROOT, path.join(profiles, file))}\n`);
  if (ingested > 0)
    process.stdout.write(
      `busy per object: ${fmt(busyMicros(profile) / 1000 / ingested, 2)} ms (${ingested} objects)\n`,
    );
}

/** A 1200 × 900 JPEG in `dir` (served by nginx) for the derivative scenario. */
async function jpegFixture(dir: string): Promise<{ name: string; size: number }> {
  const name = "derivative-source.jpg";
  const { default: sharp } = await import("sharp");
  await sharp({ create: { width: 1200, height: 900, channels: 3, background: "#3a6" } })
    .jpeg()
    .toFile(path.join(dir, name));
  return { name, size: statSync(path.join(dir, name)).size };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch(async (err: unknown) => {
    process.stderr.write(`profile failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(1);
  });
}
