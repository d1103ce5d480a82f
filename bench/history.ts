/**
 * Where along the history a request kind got dearer: several commits' Node bundles (and today's
 * checkout) measured in the same rounds, one fresh process per build and round, the order rotated
 * each round, so a step in the server's CPU per request shows between two neighbouring commits.
 * A bisection in one run, for issue 36's "find the slowdown"; `--compare` then checks one pair.
 *
 *   node --import tsx bench/history.ts <ref> <ref> … [--kind=small|304|head-less kinds] [--runs=4] [--duration=4]
 *
 * Each ref gets a worktree in bench/.work/compare-<commit> (kept, like `--compare --keep`: rerun to
 * reuse), node_modules a hard-link copy of this checkout's when every package the ref locks is
 * locked here at the same version (the bench needs no exact lock flags), its own scripts/build.mjs.
 * Writes nothing but the log and the table on stdout.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startNginx } from "./lib/nginx.js";
import { installExitHooks, stopAll } from "./lib/proc.js";
import { shippedServer } from "./lib/context.js";
import { ensureSystemTools } from "./lib/setup.js";
import { fmt, fmtSummary, loadAverage, log, summarize } from "./lib/util.js";
import { runWrk } from "./lib/wrk.js";
import { type Build, prepareCompareFiles, prepareData, startBuild } from "./scenarios/compare.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function git(args: string[], cwd = ROOT): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

const versions = (lockText: string) => {
  const { packages = {} } = JSON.parse(lockText) as { packages?: Record<string, { version?: string }> };
  return Object.fromEntries(Object.entries(packages).map(([k, v]) => [k, v.version]));
};

/** The ref's worktree with node_modules and its bundle (reused when built by an earlier run). */
function prepareRef(work: string, ref: string): Build & { commit: string } {
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]).slice(0, 12);
  const dir = path.join(work, `compare-${commit}`);
  const server = path.join(dir, "dist/node/server.mjs");
  if (!existsSync(server)) {
    if (!existsSync(dir)) git(["worktree", "add", "--detach", dir, commit]);
    const theirs = versions(readFileSync(path.join(dir, "package-lock.json"), "utf8"));
    const ours = versions(readFileSync(path.join(ROOT, "package-lock.json"), "utf8"));
    const other = Object.entries(theirs).filter(([k, v]) => k !== "" && ours[k] !== v);
    if (other.length) throw new Error(`${commit} locks other versions (${other[0]?.[0]}): use --compare (npm ci)`);
    if (!existsSync(path.join(dir, "node_modules")))
      spawnSync("cp", ["-al", path.join(ROOT, "node_modules"), path.join(dir, "node_modules")]);
    log(`history ${commit}: building…`);
    const built = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, encoding: "utf8" });
    if (built.status !== 0 || !existsSync(server)) throw new Error(`building ${commit}: ${built.stderr.slice(-2000)}`);
  }
  return { label: "ref", dir, server, bun: null, commit };
}

async function main() {
  const args = process.argv.slice(2);
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  const refs = args.filter((a) => !a.startsWith("--"));
  const runs = Number(value("runs") ?? 4);
  const duration = Number(value("duration") ?? 4);
  const kind = value("kind") ?? "small";
  if (kind !== "small" && kind !== "304") throw new Error("--kind: small or 304");
  installExitHooks();
  ensureSystemTools();
  const work = path.join(ROOT, "bench/.work");
  mkdirSync(work, { recursive: true });
  const builds = [
    ...refs.map((ref) => prepareRef(work, ref)),
    { label: "this" as const, dir: ROOT, server: await shippedServer(), bun: null, commit: "this" },
  ];
  try {
    const files = await prepareCompareFiles(work);
    const origin = await startNginx({ name: "compare-origin", root: files.dir, workDir: work });
    const opts = {
      root: ROOT,
      work,
      runs,
      duration,
      warmup: 2,
      origin,
      files,
      runtimes: ["node" as const],
      kinds: null,
    };
    const prepared: {
      build: (typeof builds)[number];
      paths: { small: string; etag: string };
      data: { volume: string; database: string };
    }[] = [];
    for (const build of builds) prepared.push({ build, ...(await prepareData(opts, build, build.commit)) });
    const cpu = new Map<string, number[]>(builds.map((b) => [b.commit, []]));
    const loads: string[] = [];
    for (let round = 0; round < runs; round++) {
      loads.push(loadAverage());
      // Rotated: each build is measured early in one round and late in another.
      const order = prepared.map((_, i) => prepared[(i + round) % prepared.length] as (typeof prepared)[number]);
      for (const p of order) {
        const server = await startBuild(p.build, "node", p.data);
        try {
          const url = `${server.url}${p.paths.small}`;
          const lua = kind === "304" ? `wrk.headers["If-None-Match"] = ${JSON.stringify(p.paths.etag)}` : undefined;
          const plan = { url, connections: 64, workDir: work, lua };
          await runWrk({ ...plan, durationSec: 2 });
          const r = await runWrk({ ...plan, durationSec: duration, cpuSeconds: server.cpuSeconds });
          const us = (r.serverCpu * r.durationSec * 1e6) / r.requests;
          (cpu.get(p.build.commit) as number[]).push(us);
          log(`  round ${round + 1} ${p.build.commit}: ${fmt(r.rps)} req/s, ${fmt(us)} µs/req`);
        } finally {
          await server.stop();
        }
      }
    }
    loads.push(loadAverage());
    const rows = builds.map((b) => {
      const subject =
        b.commit === "this"
          ? "(this checkout)"
          : git(["log", "-1", "--format=%ad %s", "--date=format:%m-%d %H:%M", b.commit]);
      return `| ${b.commit} | ${subject.replaceAll("|", "/")} | ${fmtSummary(summarize(cpu.get(b.commit) as number[]))} |`;
    });
    process.stdout.write(
      [
        `Node bundle, ${kind} (4 KiB GET${kind === "304" ? " with a matching If-None-Match" : ""}, wrk -c64), ${runs} rounds of ${duration} s; load average per round: ${loads.join(" → ")}`,
        "",
        "| commit | subject | server CPU µs/request, median (min–max) |",
        "| --- | --- | --: |",
        ...rows,
        "",
      ].join("\n"),
    );
  } finally {
    await stopAll();
  }
}

main()
  .then(() => process.exit(0))
  .catch(async (err: unknown) => {
    process.stderr.write(`history failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(1);
  });
