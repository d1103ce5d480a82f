/** What every scenario gets: options, paths, fixtures, the shared nginx, and ways to start servers. */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { buildServer } from "../../scripts/build.mjs";
import type { Baseline } from "./baseline.js";
import { type Server, startServer } from "./proc.js";
import { GiB, KiB, MiB, http, log } from "./util.js";

export interface Options {
  quick: boolean;
  /** Measured runs per target (interleaved). */
  runs: number;
  /** Seconds per wrk run. */
  duration: number;
  warmup: number;
  only: Set<string> | null;
  keep: boolean;
  /** `--baseline=<git ref>`: that commit's build is measured beside today's (baseline.ts). */
  baseline: string | null;
  /** `--compare <ref>`: only the this ÷ ref table against that commit (scenarios/compare.ts). */
  compare: string | null;
  /** `--runtimes=node,bun`: which runtimes `--compare` measures. */
  runtimes: ("node" | "bun")[];
  /** `--kinds=small,304`: which request kinds `--compare` measures (null: all). */
  kinds: Set<string> | null;
}

export interface Fixtures {
  dir: string;
  small: { name: string; path: string; size: number; sha256: string };
  large: { name: string; path: string; size: number; sha256: string };
  huge: { name: string; path: string; size: number };
  /** `ingest/o-<i>.bin`, 1 MiB each, all distinct. */
  ingestCount: number;
  ingestSize: number;
  /** `tiny/t-<i>.bin`, 4 KiB each, all distinct (createResource rate in the scale scenario). */
  tinyCount: number;
}

export interface Context {
  root: string;
  work: string;
  options: Options;
  bun: string | null;
  fixtures: Fixtures;
  /** Serves `fixtures.dir`: the reference static server and the loopback origin. */
  nginx: Server;
  /** The build of `--baseline`, or null. */
  baseline: Baseline | null;
}

export type AppVariant = {
  runtime: "node" | "bun";
  /** The small-blob cache switched off (CMS_BLOB_CACHE_BYTES=0), to show what it gains. */
  noCache?: boolean;
  logLevel?: "info" | "warn";
  /** GET /metrics on (CMS_METRICS_ENABLED=true): what counting every request costs. */
  metrics?: boolean;
  /** Further settings (e.g. CMS_ROW_CACHE_ROWS=0 in the scale scenario); the caller names such a server itself. */
  env?: Record<string, string>;
  /** The `--baseline` commit's build (Node) or tree (Bun) instead of today's. */
  baseline?: boolean;
};

export const appName = (v: AppVariant) =>
  `${v.runtime === "bun" ? "bun-app" : "app"}${v.noCache ? "-nocache" : ""}${v.logLevel === "warn" ? "@warn" : ""}${v.metrics ? "+metrics" : ""}${v.baseline ? "@base" : ""}`;

let shipped: Promise<string> | null = null;

/**
 * Builds the Node service as shipped — dist/node/server.mjs, by scripts/build.mjs, what `npm start`
 * runs — once per process, and returns its absolute path. A failed build rejects (every later call
 * too): there is no service to measure without it.
 */
export function shippedServer(): Promise<string> {
  shipped ??= (async () => {
    const started = performance.now();
    try {
      const file = await buildServer();
      log(`built ${file} (scripts/build.mjs) in ${Math.round(performance.now() - started)} ms`);
      return file;
    } catch (err) {
      throw new Error(
        `building the Node service (scripts/build.mjs → dist/node/server.mjs) failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  })();
  return shipped;
}

/**
 * Starts the real service as shipped: `node dist/node/server.mjs` (built by `shippedServer()`) or
 * `bun src/bun.ts`. Its log goes to /dev/null (what throughput runs measure) unless `logFile`.
 */
export async function startApp(
  ctx: Context,
  variant: AppVariant,
  data: { volume: string; database: string },
  logFile?: string,
): Promise<Server> {
  if (variant.baseline && !ctx.baseline) throw new Error("a baseline app runs with --baseline given");
  const server = variant.baseline ? (ctx.baseline as Baseline).server : await shippedServer();
  const [command, args] =
    variant.runtime === "bun" ? [ctx.bun as string, ["src/bun.ts"]] : [process.execPath, [server]];
  return startServer({
    name: appName(variant),
    command,
    args,
    cwd: variant.baseline ? (ctx.baseline as Baseline).dir : ctx.root,
    env: {
      CMS_VOLUME: data.volume,
      CMS_DATABASE_URL: `file:${data.database}`,
      CMS_FETCH_ALLOW_PRIVATE: "true",
      CMS_FETCH_TIMEOUT_MS: "600000",
      CMS_LOG_LEVEL: variant.logLevel ?? "info",
      ...(variant.noCache ? { CMS_BLOB_CACHE_BYTES: "0" } : {}),
      ...(variant.metrics ? { CMS_METRICS_ENABLED: "true" } : {}),
      ...variant.env,
    },
    timeoutMs: 60_000,
    stdout: logFile,
  });
}

export function startBare(
  ctx: Context,
  runtime: "node" | "bun",
  env: Record<string, string>,
  name: string,
): Promise<Server> {
  const script = path.join(ctx.root, "bench/servers", runtime === "bun" ? "bare-bun.mjs" : "bare-node.mjs");
  return startServer({
    name,
    command: runtime === "bun" ? (ctx.bun as string) : process.execPath,
    args: [script],
    cwd: ctx.root,
    env,
  });
}

export interface Created {
  resourceURI: string;
  sha256: string;
  size: number;
}

/** Last error lines of a service log file, for failure messages. */
export function logTail(file: string | undefined): string {
  if (!file || !existsSync(file)) return "";
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.includes('"level":"error"') || l.includes('"level":"warn"'));
  return lines.slice(-3).join("\n");
}

/** POST createResource; throws unless 201 (with the service's last error log lines when `logFile` is known). */
export async function createResource(
  baseUrl: string,
  externalUri: string,
  name: string,
  tenant: string,
  logFile?: string,
  mediaType = "application/octet-stream",
): Promise<Created> {
  const res = await http(`${baseUrl}/cms/v1.0/createResource`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "bench",
      resourceExternalURI: externalUri,
      resourceMediaType: mediaType,
      resourceName: name,
      resourceTenantId: tenant,
    }),
    timeoutMs: 600_000,
  });
  if (res.status !== 201) {
    throw new Error(
      `createResource ${externalUri}: ${res.status} ${res.body.toString().slice(0, 300)}\n${logTail(logFile)}`,
    );
  }
  return JSON.parse(res.body.toString()) as Created;
}

export const getDataPath = (resourceURI: string) => `/cms/v1.0/getData/${resourceURI}`;

const sha256File = (file: string) => {
  const hash = createHash("sha256");
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(8 * MiB);
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
};

/** Writes `size` random-looking bytes in 8 MiB chunks (fresh randomness per chunk: no compression, no dedup). */
function writeRandom(file: string, size: number) {
  const fd = openSync(file, "w");
  try {
    for (let written = 0; written < size; ) {
      const n = Math.min(8 * MiB, size - written);
      writeSync(fd, randomBytes(n));
      written += n;
    }
  } finally {
    closeSync(fd);
  }
}

function ensureFile(file: string, size: number, make: () => void) {
  if (existsSync(file) && statSync(file).size === size) return;
  make();
}

/** Creates the fixtures once (kept across runs with --keep); sizes follow --quick. */
export function prepareFixtures(work: string, quick: boolean): Fixtures {
  const dir = path.join(work, "files");
  mkdirSync(path.join(dir, "ingest"), { recursive: true });
  mkdirSync(path.join(dir, "tiny"), { recursive: true });
  const smallPath = path.join(dir, "small.bin");
  const largePath = path.join(dir, "large.bin");
  const hugePath = path.join(dir, "huge.bin");
  const largeSize = 256 * MiB;
  const hugeSize = quick ? 256 * MiB : GiB;
  log("preparing fixtures…");
  ensureFile(smallPath, 4 * KiB, () => writeRandom(smallPath, 4 * KiB));
  ensureFile(largePath, largeSize, () => writeRandom(largePath, largeSize));
  ensureFile(hugePath, hugeSize, () => writeRandom(hugePath, hugeSize));
  const ingestCount = quick ? 64 : 256;
  const ingestSize = MiB;
  const base = randomBytes(ingestSize);
  for (let i = 0; i < ingestCount + 32; i++) {
    const file = path.join(dir, "ingest", `o-${i}.bin`);
    ensureFile(file, ingestSize, () => {
      base.writeUInt32BE(i, 0);
      base.writeUInt32BE(Date.now() >>> 0, 4);
      const fd = openSync(file, "w");
      writeSync(fd, base);
      closeSync(fd);
    });
  }
  const tinyCount = quick ? 200 : 600;
  const tinyBase = randomBytes(4 * KiB);
  for (let i = 0; i < tinyCount; i++) {
    const file = path.join(dir, "tiny", `t-${i}.bin`);
    ensureFile(file, 4 * KiB, () => {
      tinyBase.writeUInt32BE(i, 0);
      tinyBase.writeUInt32BE(Date.now() >>> 0, 4);
      const fd = openSync(file, "w");
      writeSync(fd, tinyBase);
      closeSync(fd);
    });
  }
  return {
    dir,
    small: {
      name: "small.bin",
      path: smallPath,
      size: 4 * KiB,
      sha256: createHash("sha256").update(readFileSync(smallPath)).digest("hex"),
    },
    large: { name: "large.bin", path: largePath, size: largeSize, sha256: sha256File(largePath) },
    huge: { name: "huge.bin", path: hugePath, size: hugeSize },
    ingestCount,
    ingestSize,
    tinyCount,
  };
}

/** GETs `url` (optionally a Range) and checks status and the SHA-256 of the body. */
export async function verify(
  url: string,
  expected: { sha256: string; status?: number; range?: string },
): Promise<void> {
  const res = await http(url, { headers: expected.range ? { range: expected.range } : {}, timeoutMs: 120_000 });
  const sha256 = createHash("sha256").update(res.body).digest("hex");
  if (res.status !== (expected.status ?? 200) || sha256 !== expected.sha256) {
    const body = res.body.byteLength < 2000 ? `: ${res.body.toString()}` : "";
    throw new Error(
      `verification failed for ${url}: status ${res.status}, sha256 ${sha256.slice(0, 12)}…, expected ${expected.sha256.slice(0, 12)}…${body}`,
    );
  }
}

/**
 * Verifies every target; a target that fails is dropped (and reported) rather than failing the
 * whole scenario. Returns the targets that passed and a markdown note on the ones that did not.
 */
export async function verifyAll<T extends { name: string; url: string }>(
  targets: T[],
  expected: { sha256: string; status?: number; range?: string },
): Promise<{ passed: T[]; note: string }> {
  const passed: T[] = [];
  const failed: string[] = [];
  for (const target of targets) {
    try {
      await verify(target.url, expected);
      passed.push(target);
    } catch (err) {
      const exited = "server" in target ? (target as { server: Server }).server.exited() : null;
      if (exited) (err as Error).message += ` (the server had exited: code ${exited.code}, signal ${exited.signal})`;
      log(`  ${target.name} dropped: ${(err as Error).message}`);
      failed.push(`\`${target.name}\`: ${(err as Error).message.replace(/\s+/g, " ").slice(0, 400)}`);
    }
  }
  return {
    passed,
    note: failed.length
      ? `**Dropped before measuring (wrong answer, or the server was gone):** ${failed.join("; ")}\n`
      : "",
  };
}

export function sliceSha256(file: string, start: number, end: number): string {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(end - start + 1);
    readSync(fd, buffer, 0, buffer.length, start);
    return createHash("sha256").update(buffer).digest("hex");
  } finally {
    closeSync(fd);
  }
}
