/**
 * `npm run bench -- --compare <git ref>`: today's build against the ref's, both as shipped (Node:
 * `node dist/node/server.mjs`; Bun: `bun src/bun.ts`), in the same rounds. Each round starts a fresh
 * process of each build (two processes of one build can differ by 25 %, measure.ts), warms both up,
 * then runs every request kind on both back to back (order swapped each round), so each per-round
 * ratio (this ÷ ref) compares two runs seconds apart on the same machine state. Request kinds the
 * ref does not have (no `versionedURI`, no image derivatives, no signed links) are reported as n/a.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { runAbHead } from "../lib/ab.js";
import type { CompareRef } from "../lib/compare-ref.js";
import { type Created, createResource, getDataPath } from "../lib/context.js";
import { table } from "../lib/measure.js";
import { type Server, startServer } from "../lib/proc.js";
import { type Summary, KiB, MiB, fmt, fmtRatio, fmtSummary, http, loadAverage, log, summarize } from "../lib/util.js";
import { type WrkResult, rangeLua, runWrk, totalErrors } from "../lib/wrk.js";

/** One build under test: today's checkout or the ref's worktree. */
export interface Build {
  label: "this" | "ref";
  /** Working directory (src/bun.ts, node_modules, the database migrations). */
  dir: string;
  /** Its dist/node/server.mjs. */
  server: string;
  bun: string | null;
}

export interface CompareOptions {
  root: string;
  work: string;
  runs: number;
  duration: number;
  warmup: number;
  /** Serves the fixtures (the origin createResource fetches from). */
  origin: Server;
  files: CompareFiles;
  runtimes: ("node" | "bun")[];
  /** Only these request kinds (`--kinds=small,304`); null: every kind. */
  kinds: Set<string> | null;
}

export interface CompareFiles {
  dir: string;
  small: string;
  mid: string;
  image: string;
}

const MID_SIZE = 64 * MiB;
const RANGE = 64 * KiB;
const LINK_SECRET = "bench-compare-link-secret-0123456789abcdef";
const DERIVATIVE = "width=320&format=webp";

/** The paths one build answers for each request kind (null: the build has no such feature). */
interface Paths {
  small: string;
  mid: string;
  etag: string;
  versioned: string | null;
  derivative: string | null;
  signed: string | null;
}

interface Kind {
  key: string;
  what: string;
  connections: number;
  lua?: (p: Paths) => string;
  /** HEAD goes through ab (lib/ab.ts): wrk waits for a HEAD answer's body. */
  head?: true;
  path: (p: Paths) => string | null;
}

const KINDS: Kind[] = [
  { key: "small", what: "GET 4 KiB (getData)", connections: 64, path: (p) => p.small },
  {
    key: "ranges",
    what: "random 64 KiB range of a 64 MiB resource",
    connections: 64,
    lua: () => rangeLua(MID_SIZE, RANGE),
    path: (p) => p.mid,
  },
  { key: "large", what: "GET 64 MiB, one connection", connections: 1, path: (p) => p.mid },
  { key: "head", what: "HEAD 4 KiB (ab -k -i)", connections: 64, head: true, path: (p) => p.small },
  {
    key: "304",
    what: "GET 4 KiB with a matching If-None-Match",
    connections: 64,
    lua: (p) => `wrk.headers["If-None-Match"] = ${JSON.stringify(p.etag)}`,
    path: (p) => p.small,
  },
  { key: "?v=", what: "GET 4 KiB by its versioned URL", connections: 64, path: (p) => p.versioned },
  {
    key: "derivative",
    what: `cached image derivative (?${DERIVATIVE})`,
    connections: 64,
    path: (p) => p.derivative,
  },
  { key: "signed", what: "GET 4 KiB through a signed link", connections: 64, path: (p) => p.signed },
];

function writeRandom(file: string, size: number) {
  if (existsSync(file) && statSync(file).size === size) return;
  const fd = openSync(file, "w");
  try {
    for (let written = 0; written < size; written += 8 * MiB)
      writeSync(fd, randomBytes(Math.min(8 * MiB, size - written)));
  } finally {
    closeSync(fd);
  }
}

/** 4 KiB and 64 MiB of random bytes, and a 1600 × 1200 photo-like JPEG (smooth gradient plus noise). */
export async function prepareCompareFiles(work: string): Promise<CompareFiles> {
  const dir = path.join(work, "compare-files");
  mkdirSync(dir, { recursive: true });
  const files = {
    dir,
    small: path.join(dir, "small.bin"),
    mid: path.join(dir, "mid.bin"),
    image: path.join(dir, "photo.jpg"),
  };
  writeRandom(files.small, 4 * KiB);
  writeRandom(files.mid, MID_SIZE);
  if (!existsSync(files.image)) {
    const [w, h] = [1600, 1200];
    const pixels = Buffer.alloc(w * h * 3);
    const noise = randomBytes(w * h);
    for (let i = 0; i < w * h; i++) {
      const x = i % w;
      const y = (i / w) | 0;
      pixels[i * 3] = (x * 255) / w;
      pixels[i * 3 + 1] = ((y * 255) / h + (noise[i] as number) / 8) & 255;
      pixels[i * 3 + 2] = 128;
    }
    writeFileSync(
      files.image,
      await sharp(pixels, { raw: { width: w, height: h, channels: 3 } })
        .jpeg()
        .toBuffer(),
    );
  }
  return files;
}

export function startBuild(
  build: Build,
  runtime: "node" | "bun",
  data: { volume: string; database: string },
  logFile?: string,
) {
  const [command, args] =
    runtime === "bun" ? [build.bun as string, ["src/bun.ts"]] : [process.execPath, [build.server]];
  return startServer({
    name: `${runtime === "bun" ? "bun-app" : "app"}@${build.label}`,
    command,
    args,
    cwd: build.dir,
    env: {
      CMS_VOLUME: data.volume,
      CMS_DATABASE_URL: `file:${data.database}`,
      CMS_FETCH_ALLOW_PRIVATE: "true",
      CMS_FETCH_TIMEOUT_MS: "600000",
      CMS_LOG_LEVEL: "info",
      CMS_LINK_SECRET: LINK_SECRET,
    },
    timeoutMs: 60_000,
    stdout: logFile,
  });
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** Creates the three resources on `build`'s own volume and database, and finds which kinds it answers. */
export async function prepareData(opts: CompareOptions, build: Build, name: string = build.label) {
  const dir = path.join(opts.work, `compare-data-${name}`);
  // A volume belongs to one database: a kept one from an earlier run (--keep) would refuse the new.
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const data = { volume: path.join(dir, "volume"), database: path.join(dir, `cms-${Date.now()}.db`) };
  const logFile = path.join(dir, "prepare.log");
  const app = await startBuild(build, "node", data, logFile);
  try {
    const origin = opts.origin.url;
    const create = (file: string, type?: string) =>
      createResource(app.url, `${origin}/${path.basename(file)}`, path.basename(file), "bench", logFile, type);
    const small: Created & { versionedURI?: string } = await create(opts.files.small);
    const mid = await create(opts.files.mid);
    const image = await create(opts.files.image, "image/jpeg");
    const smallPath = getDataPath(small.resourceURI);
    const first = await http(`${app.url}${smallPath}`);
    if (first.status !== 200 || sha256(first.body) !== sha256(readFileSync(opts.files.small)))
      throw new Error(`${build.label}: GET small answered ${first.status} with other bytes`);
    const etag = String(first.headers.etag ?? "");
    const probe = async (p: string, ok: (r: Awaited<ReturnType<typeof http>>) => boolean) =>
      ok(await http(`${app.url}${p}`, { timeoutMs: 60_000 })) ? p : null;
    const versioned = small.versionedURI
      ? await probe(getDataPath(small.versionedURI), (r) => r.status === 200 && sha256(r.body) === sha256(first.body))
      : null;
    const derivative = await probe(
      `${getDataPath(image.resourceURI)}?${DERIVATIVE}`,
      (r) => r.status === 200 && r.headers["content-type"] === "image/webp",
    );
    let signed: string | null = null;
    const link = await http(`${app.url}/cms/v1.0/createDataLink`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ resourceURI: small.resourceURI, expiresIn: 7 * 24 * 3600 }),
    });
    if (link.status === 200) {
      const url = new URL((JSON.parse(link.body.toString()) as { url: string }).url);
      signed = await probe(
        `${url.pathname}${url.search}`,
        (r) => r.status === 200 && sha256(r.body) === sha256(first.body),
      );
    }
    const paths: Paths = { small: smallPath, mid: getDataPath(mid.resourceURI), etag, versioned, derivative, signed };
    log(
      `compare ${build.label}: ${Object.entries(paths)
        .map(([k, v]) => `${k}=${v === null ? "n/a" : "ok"}`)
        .join(" ")}`,
    );
    return { data, paths };
  } finally {
    await app.stop();
  }
}

interface Round {
  load: string;
  /** kind → build label → result */
  results: Map<string, Map<string, WrkResult>>;
}

const cpuPerRequestUs = (r: WrkResult) => (r.serverCpu * r.durationSec * 1e6) / r.requests;
/**
 * Its user-mode part: the build's own code. The kernel's part on loopback moves with how the two
 * processes meet (whether the client sleeps when an answer arrives, who runs the receive path):
 * with the same syscalls per request it has measured 5–9 µs per 4 KiB GET for one build, and the
 * client's kernel time moves with it (bench/NOTES.md, "eleventh pass").
 */
const userCpuPerRequestUs = (r: WrkResult) => (r.serverUserCpu * r.durationSec * 1e6) / r.requests;
/** Under this much user CPU in a run (20 of the kernel's 1/100 s ticks) a ratio is noise: left out. */
const MIN_USER_SECONDS = 0.2;
const userCpuRatio = (a: WrkResult, b: WrkResult) =>
  Math.min(a.serverUserCpu * a.durationSec, b.serverUserCpu * b.durationSec) < MIN_USER_SECONDS
    ? Number.NaN
    : userCpuPerRequestUs(b) / userCpuPerRequestUs(a);

/** Runs the comparison on each runtime and returns the markdown (tables per runtime). */
export async function compareBuilds(opts: CompareOptions, builds: [Build, Build], ref: CompareRef): Promise<string> {
  const prepared = [] as { build: Build; data: { volume: string; database: string }; paths: Paths }[];
  for (const build of builds) prepared.push({ build, ...(await prepareData(opts, build)) });
  const sections: string[] = [];
  const unknown = [...(opts.kinds ?? [])].filter((k) => !KINDS.some((kind) => kind.key === k));
  if (unknown.length)
    throw new Error(`unknown kind(s) ${unknown.join(", ")}; known: ${KINDS.map((k) => k.key).join(", ")}`);
  const kinds = opts.kinds === null ? KINDS : KINDS.filter((kind) => opts.kinds?.has(kind.key));
  for (const runtime of opts.runtimes) {
    const rounds: Round[] = [];
    for (let round = 0; round < opts.runs; round++) {
      const order = round % 2 === 0 ? prepared : [...prepared].reverse();
      const servers = new Map<string, Server>();
      try {
        for (const p of order) servers.set(p.build.label, await startBuild(p.build, runtime, p.data));
        const url = (p: (typeof prepared)[number], kind: Kind) => {
          const at = kind.path(p.paths);
          return at === null ? null : `${(servers.get(p.build.label) as Server).url}${at}`;
        };
        const wrk = (
          p: (typeof prepared)[number],
          kind: Kind,
          seconds: number,
          cpu?: { total: () => number; user: () => number },
        ) =>
          kind.head
            ? runAbHead({
                url: url(p, kind) as string,
                connections: kind.connections,
                durationSec: seconds,
                cpuSeconds: cpu?.total,
                userCpuSeconds: cpu?.user,
              })
            : runWrk({
                url: url(p, kind) as string,
                connections: kind.connections,
                durationSec: seconds,
                timeoutSec: 30,
                lua: kind.lua?.(p.paths),
                workDir: opts.work,
                cpuSeconds: cpu?.total,
                userCpuSeconds: cpu?.user,
              });
        for (const kind of kinds)
          for (const p of order) if (url(p, kind) !== null && opts.warmup > 0) await wrk(p, kind, opts.warmup);
        const load = loadAverage();
        const results = new Map<string, Map<string, WrkResult>>();
        for (const [k, kind] of kinds.entries()) {
          const byBuild = new Map<string, WrkResult>();
          // Swap the pair's order from kind to kind and round to round: neither build always goes first.
          const pair = (k + round) % 2 === 0 ? prepared : [...prepared].reverse();
          for (const p of pair) {
            if (url(p, kind) === null) continue;
            const server = servers.get(p.build.label) as Server;
            const r = await wrk(p, kind, opts.duration, { total: server.cpuSeconds, user: server.userCpuSeconds });
            byBuild.set(p.build.label, r);
            const errors = totalErrors(r);
            log(
              `  ${runtime} round ${round + 1} ${kind.key.padEnd(10)} ${p.build.label}: ${fmt(r.rps).padStart(8)} req/s ${fmt(r.mbps).padStart(7)} MB/s cpu ${fmt(cpuPerRequestUs(r))} µs/req (user ${fmt(userCpuPerRequestUs(r))})${errors ? ` ERRORS ${JSON.stringify(r.errors)}` : ""}`,
            );
          }
          results.set(kind.key, byBuild);
        }
        rounds.push({ load: `${load} → ${loadAverage()}`, results });
      } finally {
        await Promise.all([...servers.values()].map((s) => s.stop()));
      }
    }
    sections.push(renderRuntime(runtime, kinds, rounds, ref));
  }
  return sections.join("\n\n");
}

function perRound(rounds: Round[], kind: string, f: (a: WrkResult, b: WrkResult) => number): Summary {
  const values: number[] = [];
  for (const r of rounds) {
    const a = r.results.get(kind)?.get("this");
    const b = r.results.get(kind)?.get("ref");
    if (a && b && totalErrors(a) === 0 && totalErrors(b) === 0) values.push(f(a, b));
  }
  return summarize(values);
}

function renderRuntime(runtime: string, kinds: Kind[], rounds: Round[], ref: CompareRef): string {
  const rows = kinds.map((kind) => {
    const of = (label: string) =>
      summarize(
        rounds
          .map((r) => r.results.get(kind.key)?.get(label))
          .filter((x) => x !== undefined)
          .map((x) => x.rps),
      );
    const thisRps = of("this");
    const refRps = of("ref");
    if (refRps.n === 0 || thisRps.n === 0)
      return [
        kind.key,
        kind.what,
        fmtSummary(thisRps),
        refRps.n === 0 ? "n/a" : fmtSummary(refRps),
        "n/a",
        "n/a",
        "n/a",
      ];
    return [
      kind.key,
      kind.what,
      fmtSummary(thisRps),
      fmtSummary(refRps),
      fmtRatio(perRound(rounds, kind.key, (a, b) => a.rps / b.rps)),
      fmtRatio(perRound(rounds, kind.key, (a, b) => cpuPerRequestUs(b) / cpuPerRequestUs(a))),
      fmtRatio(perRound(rounds, kind.key, userCpuRatio)),
    ];
  });
  return [
    `### ${runtime === "bun" ? "Bun (`bun src/bun.ts`)" : "Node (`node dist/node/server.mjs`)"}: this ÷ \`${ref.ref}\` (${ref.commit})`,
    "",
    table(
      [
        "kind",
        "request",
        "this req/s",
        "ref req/s",
        "req/s ratio this ÷ ref",
        "CPU/request ratio ref ÷ this",
        "user CPU/request ratio ref ÷ this",
      ],
      rows,
    ),
    "",
    `Load average (1, 5, 15 min) at the start → end of each round's measured runs: ${rounds.map((r, i) => `round ${i + 1}: ${r.load}`).join("; ")}.`,
  ].join("\n");
}
