/**
 * CPU per request of Node server bundles, one fresh process per build and round, split by thread:
 * what `--compare` cannot say — how far two processes of ONE build differ (an A/A run: name one
 * checkout twice), and whether a gap is on the main thread or in V8's and libuv's helpers.
 *
 *   node --import tsx bench/processes.ts [--rounds=5] [--seconds=6] [--kinds=head,get,ranges]
 *     [--connections=64] [--strace] [--mixed] label=<checkout>[@NAME=value…] …
 *   e.g. node --import tsx bench/processes.ts main=. again=. ref=bench/.work/compare-b72fcdc7fd45
 *
 * Each checkout's dist/node/server.mjs (build it first) gets its own volume and database with a
 * 4 KiB and a 64 MiB resource from a loopback origin. Per round and build: start, a 2 s warm-up per
 * kind, then `--seconds` of load (HEAD: ab -k -i; GET 4 KiB and random 64 KiB ranges: wrk, one
 * thread); builds alternate which goes first. CPU is each thread's utime + stime
 * (/proc/<pid>/task/<tid>/stat), µs per request; `main` is the event loop's thread. `--strace`
 * also counts the server's syscalls per run (strace -f -c) into bench/.work/processes/. `--mixed`
 * first sends 2 s of GETs the fast path hands to the app (`?via=app`), as `--compare`'s warm-up does.
 * Prints one line per run and the median (min–max) per kind and build.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runAbHead } from "./lib/ab.js";
import { createResource, getDataPath } from "./lib/context.js";
import { installExitHooks, startServer, stopAll } from "./lib/proc.js";
import { fmt, loadAverage, summarize, fmtSummary } from "./lib/util.js";
import { rangeLua, runWrk, totalErrors } from "./lib/wrk.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WORK = path.join(ROOT, "bench/.work/processes");
const SMALL = 4096;
const MID = 64 * 1024 * 1024;
const RANGE = 64 * 1024;

const flags = new Map<string, string>();
const specs: string[] = [];
for (const arg of process.argv.slice(2)) {
  const m = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
  if (m) flags.set(m[1] as string, m[2] ?? "true");
  else specs.push(arg);
}
const rounds = Number(flags.get("rounds") ?? 5);
const seconds = Number(flags.get("seconds") ?? 6);
const kinds = (flags.get("kinds") ?? "head,get,ranges").split(",");
const connections = Number(flags.get("connections") ?? 64);
const builds = specs.map((spec) => {
  const [named, ...env] = spec.split("@");
  const [label, dir] = (named as string).split("=") as [string, string];
  if (!label || !dir) throw new Error(`expected label=<checkout>, got ${spec}`);
  return { label, dir: path.resolve(dir), env: Object.fromEntries(env.map((e) => e.split("=", 2))) };
});
if (builds.length === 0) throw new Error("name at least one build: label=<checkout>");
type Build = (typeof builds)[number];

/**
 * CPU ticks (1/100 s) per thread of `pid`, user + system; the event loop's thread as `main`, and
 * its system (kernel) part alone as `main kernel` (callgrind counts user instructions only).
 */
function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks.set(name, (ticks.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
      if (name === "main") ticks.set(KERNEL, Number(fields[12]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ticks;
}

const KERNEL = "main kernel";

const small = randomBytes(SMALL);
const mid = randomBytes(MID);
const origin = http.createServer((req, res) => res.end(req.url === "/mid.bin" ? mid : small));
await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
const originUrl = `http://127.0.0.1:${(origin.address() as { port: number }).port}`;
installExitHooks();
mkdirSync(WORK, { recursive: true });

const start = (build: Build) =>
  startServer({
    name: build.label,
    command: process.execPath,
    args: [path.join(build.dir, "dist/node/server.mjs")],
    cwd: build.dir,
    env: {
      CMS_VOLUME: path.join(WORK, build.label, "volume"),
      CMS_DATABASE_URL: `file:${path.join(WORK, build.label, "cms.db")}`,
      CMS_FETCH_ALLOW_PRIVATE: "true",
      CMS_LOG_LEVEL: "info",
      ...build.env,
    },
  });

const paths = new Map<string, { small: string; mid: string }>();
for (const build of builds) {
  rmSync(path.join(WORK, build.label), { recursive: true, force: true });
  const server = await start(build);
  const create = async (name: string) =>
    getDataPath((await createResource(server.url, `${originUrl}/${name}`, name, "bench")).resourceURI);
  paths.set(build.label, { small: await create("small.bin"), mid: await create("mid.bin") });
  await server.stop();
}

const perRequest = new Map<string, number[]>();
const kernelPerRequest = new Map<string, number[]>();
for (let round = 1; round <= rounds; round++) {
  for (const build of round % 2 ? builds : [...builds].reverse()) {
    const server = await start(build);
    const pid = server.child.pid as number;
    const at = paths.get(build.label) as { small: string; mid: string };
    const load = (kind: string, durationSec: number) =>
      kind === "head"
        ? runAbHead({ url: server.url + at.small, connections, durationSec })
        : runWrk({
            url: server.url + (kind === "ranges" ? at.mid : at.small),
            connections,
            durationSec,
            workDir: WORK,
            lua: kind === "ranges" ? rangeLua(MID, RANGE) : undefined,
          });
    try {
      if (flags.has("mixed")) {
        // What --compare's warm-up does before any kind is measured: requests the runtime's fast
        // path hands to the app (there: ?v=, signed links), so code both paths share has seen both.
        const viaApp = await runWrk({
          url: `${server.url}${at.small}?via=app`,
          connections,
          durationSec: 2,
          workDir: WORK,
        });
        if (totalErrors(viaApp) > 0)
          throw new Error(`${build.label}: ?via=app answered ${JSON.stringify(viaApp.errors)}`);
      }
      for (const kind of kinds) {
        await load(kind, 2);
        let tracer: ChildProcess | null = null;
        if (flags.has("strace")) {
          const out = path.join(WORK, `strace-${kind}-${build.label}-${round}.txt`);
          tracer = spawn("strace", ["-f", "-c", "-o", out, "-p", String(pid)], { stdio: "ignore" });
          await new Promise((resolve) => setTimeout(resolve, 300)); // strace attaching to every thread
        }
        const before = threadTicks(pid);
        const run = await load(kind, seconds);
        const after = threadTicks(pid);
        if (tracer) {
          const exited = new Promise((resolve) => tracer.once("exit", resolve));
          tracer.kill("SIGINT");
          await exited;
        }
        const us = (name: string) => (((after.get(name) ?? 0) - (before.get(name) ?? 0)) * 10_000) / run.requests;
        const threads = [...after.keys()].filter((name) => name !== KERNEL);
        const total = threads.reduce((sum, name) => sum + us(name), 0);
        const helpers = threads
          .filter((name) => name !== "main" && us(name) >= 0.1)
          .map((name) => `${name} ${fmt(us(name))}`);
        const key = `${kind} ${build.label}`;
        perRequest.set(key, [...(perRequest.get(key) ?? []), total]);
        kernelPerRequest.set(key, [...(kernelPerRequest.get(key) ?? []), us(KERNEL)]);
        console.log(
          `round ${round} ${kind.padEnd(6)} ${build.label.padEnd(8)} ${fmt(run.rps).padStart(7)} req/s  CPU ${fmt(total)} µs/request (main thread ${fmt(us("main"))}, kernel ${fmt(us(KERNEL))}${helpers.length ? `; ${helpers.join(", ")}` : ""})  load ${loadAverage()}`,
        );
      }
    } finally {
      await server.stop();
    }
  }
}
console.log(`\nCPU µs per request, median (min–max) of ${rounds} processes:`);
for (const kind of kinds)
  for (const build of builds) {
    const values = perRequest.get(`${kind} ${build.label}`) ?? [];
    const kernel = kernelPerRequest.get(`${kind} ${build.label}`) ?? [];
    console.log(
      `  ${kind.padEnd(6)} ${build.label.padEnd(8)} ${fmtSummary(summarize(values))}  (main thread's kernel part ${fmtSummary(summarize(kernel))})`,
    );
  }
origin.close();
await stopAll();
