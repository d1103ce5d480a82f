/**
 * `npm run bench`: installs what it needs, runs every scenario on 127.0.0.1 and writes
 * bench/RESULTS.md (+ bench/RESULTS.json with every sample). Not part of `npm test`.
 *
 *   npm run bench                      full run (≈ 15 min on 2 cores)
 *   npm run bench -- --quick           smoke run: short runs, smaller files (indicative only)
 *   npm run bench -- --only=small,cold --runs=5 --duration=8 --keep
 *   npm run bench -- --only=cold,ingest --baseline=<git ref>   today's build against that commit's
 *   npm run bench -- --compare <git ref>   today's build against the ref's (a temporary worktree), Node and Bun
 *   BENCH_DIRECTUS_DIR=/work/directus-bench npm run bench -- --only=images   beside Directus (bench/lib/directus.ts)
 *
 * Scenarios: small, large, ingest, scale, cold, workers, remote, edge, images (Bun rows are part of small, large and cold).
 * The Node service runs as shipped: `node dist/node/server.mjs`, built first by scripts/build.mjs.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { prepareBaseline } from "./lib/baseline.js";
import { type Context, type Options, prepareFixtures, shippedServer } from "./lib/context.js";
import { startNginx } from "./lib/nginx.js";
import { installExitHooks, stopAll } from "./lib/proc.js";
import { Report } from "./lib/report.js";
import { ensureBun, ensureSystemTools, machineInfo } from "./lib/setup.js";
import { loadAverage, log } from "./lib/util.js";
import { prepareCompareRef } from "./lib/compare-ref.js";
import { compareBuilds, prepareCompareFiles } from "./scenarios/compare.js";
import { coldStart } from "./scenarios/cold-start.js";
import { edgeCache } from "./scenarios/edge-cache.js";
import { images } from "./scenarios/images.js";
import { ingest } from "./scenarios/ingest.js";
import { scale } from "./scenarios/scale.js";
import { largeFile, smallFiles } from "./scenarios/serving.js";
import { remoteDatabase } from "./scenarios/remote-database.js";
import { workers } from "./scenarios/workers.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCENARIOS = ["small", "large", "ingest", "scale", "cold", "workers", "remote", "edge", "images"] as const;

function parseOptions(argv: string[]): Options {
  const flag = (name: string) => argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  // Only the first "=" separates: a value may hold one (`--kinds=small,?v=`).
  const value = (name: string) => {
    const arg = flag(name);
    return arg?.includes("=") ? arg.slice(arg.indexOf("=") + 1) : undefined;
  };
  // `--compare <ref>` or `--compare=<ref>`.
  const compareAt = argv.indexOf("--compare");
  const compare = value("compare") ?? (compareAt >= 0 ? argv[compareAt + 1] : undefined);
  if (compareAt >= 0 && (!compare || compare.startsWith("--"))) throw new Error("--compare needs a git ref");
  const quick = flag("quick") !== undefined;
  const only = value("only");
  const unknown = only?.split(",").filter((s) => !(SCENARIOS as readonly string[]).includes(s)) ?? [];
  if (unknown.length) throw new Error(`unknown scenario(s) ${unknown.join(", ")}; known: ${SCENARIOS.join(", ")}`);
  return {
    quick,
    runs: Number(value("runs") ?? (quick ? 2 : 3)),
    duration: Number(value("duration") ?? (quick ? 2 : 5)),
    warmup: Number(value("warmup") ?? (quick ? 1 : 2)),
    only: only ? new Set(only.split(",")) : null,
    keep: flag("keep") !== undefined,
    baseline: value("baseline") ?? null,
    compare: compare ?? null,
    runtimes: (value("runtimes") ?? "node,bun").split(",") as ("node" | "bun")[],
    kinds: value("kinds") ? new Set((value("kinds") as string).split(",")) : null,
  };
}

async function main() {
  const started = performance.now();
  const options = parseOptions(process.argv.slice(2));
  installExitHooks();
  const loadBefore = loadAverage();
  // Every scenario runs the Node service as shipped: build dist/node/server.mjs once, first, so a
  // broken build stops the run here (not as one failure per scenario).
  await shippedServer();
  ensureSystemTools();
  if (options.compare !== null) return compareMain(options, started, loadBefore);
  const bun = ensureBun(ROOT);
  const info = machineInfo(bun);
  const work = path.join(ROOT, "bench/.work");
  mkdirSync(work, { recursive: true });
  const fixtures = prepareFixtures(work, options.quick);
  const baseline = options.baseline === null ? null : prepareBaseline(ROOT, work, options.baseline);
  const nginx = await startNginx({ root: fixtures.dir, workDir: work });
  const ctx: Context = { root: ROOT, work, options, bun, fixtures, nginx, baseline };
  const report = new Report();
  const wanted = (name: (typeof SCENARIOS)[number]) => options.only === null || options.only.has(name);
  const scenarios: [(typeof SCENARIOS)[number], (c: Context, r: Report) => Promise<void>][] = [
    ["small", smallFiles],
    ["large", largeFile],
    ["ingest", ingest],
    ["scale", scale],
    ["cold", coldStart],
    ["workers", workers],
    ["remote", remoteDatabase],
    ["edge", edgeCache],
    ["images", images],
  ];
  const failures: string[] = [];
  try {
    for (const [name, run] of scenarios) {
      if (!wanted(name)) continue;
      try {
        await run(ctx, report);
      } catch (err) {
        // One broken scenario must not cost the others' figures: record it and go on.
        const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
        log(`scenario ${name} FAILED: ${message}`);
        failures.push(name);
        report.section(`${name}: FAILED`, `\`\`\`\n${message.slice(0, 3000)}\n\`\`\``);
      }
    }
  } finally {
    await stopAll();
  }
  const args = process.argv.slice(2).join(" ");
  // Only a full run replaces the committed figures; a partial one (--only, --quick) or an A/B
  // against a baseline writes beside them (git-ignored).
  const partial = options.only !== null || options.quick || options.baseline !== null;
  const markdown = report.render(info, {
    command: `npm run bench${args ? ` -- ${args}` : ""}`,
    runs: options.runs,
    duration: options.duration,
    quick: options.quick,
    partial,
    elapsedSec: (performance.now() - started) / 1000,
    loadBefore,
    loadAfter: loadAverage(),
  });
  const base = path.join(ROOT, partial ? "bench/RESULTS.partial" : "bench/RESULTS");
  const out = `${base}.md`;
  writeFileSync(out, markdown);
  writeFileSync(
    `${base}.json`,
    `${JSON.stringify({ info, options: { ...options, only: options.only && [...options.only] }, checks: report.checks, samples: report.raw }, null, 1)}\n`,
  );
  if (!options.keep) rmSync(work, { recursive: true, force: true });
  log(`wrote ${path.relative(ROOT, out)} in ${Math.round((performance.now() - started) / 1000)} s`);
  if (failures.length) process.exitCode = 1;
  if (failures.length) log(`FAILED scenarios: ${failures.join(", ")} (see ${path.relative(ROOT, out)})`);
  for (const c of report.checks)
    log(
      `${c.info ? "info" : c.met === null ? "n/a " : c.met ? "MET " : "MISS"} ${c.scenario}: ${c.what} = ${c.value} (target ${c.target})`,
    );
}

/**
 * `--compare <ref>`: only the this ÷ ref table (scenarios/compare.ts), written to
 * bench/RESULTS.partial.md (git-ignored; the committed figures are copied into RESULTS.md by hand).
 */
async function compareMain(options: Options, started: number, loadBefore: string) {
  const bun = ensureBun(ROOT);
  const info = machineInfo(bun);
  const work = path.join(ROOT, "bench/.work");
  mkdirSync(work, { recursive: true });
  const ref = prepareCompareRef(ROOT, work, options.compare as string, options.keep);
  try {
    const files = await prepareCompareFiles(work);
    const origin = await startNginx({ name: "compare-origin", root: files.dir, workDir: work });
    const runtimes = options.runtimes.filter((r) => r === "node" || bun !== null);
    const body = await compareBuilds(
      {
        root: ROOT,
        work,
        runs: options.runs,
        duration: options.duration,
        warmup: options.warmup,
        origin,
        files,
        runtimes,
        kinds: options.kinds,
      },
      [
        { label: "this", dir: ROOT, server: await shippedServer(), bun },
        { label: "ref", dir: ref.dir, server: ref.server, bun: path.join(ref.dir, "node_modules/.bin/bun") },
      ],
      ref,
    );
    const args = process.argv.slice(2).join(" ");
    const markdown = [
      `# --compare ${ref.ref} (${ref.commit})`,
      "",
      `Generated by \`npm run bench -- ${args}\` on ${info.date}: ${info.cpu} × ${info.cores}, Node ${info.node}, Bun ${info.bun}, wrk one thread.`,
      `${options.runs} rounds; each round a fresh process of each build, a ${options.warmup} s warm-up per kind, then ${options.duration} s per kind and build, the two back to back (order swapped per kind and round).`,
      `Ratios are per round, then median (min–max); a run with errors is left out. The ref's node_modules: ${ref.modules}.`,
      `Load average before / after: ${loadBefore} / ${loadAverage()}; ${Math.round((performance.now() - started) / 1000)} s in all.`,
      "",
      body,
      "",
    ].join("\n");
    const out = path.join(ROOT, "bench/RESULTS.partial.md");
    writeFileSync(out, markdown);
    process.stdout.write(markdown);
    log(`wrote ${path.relative(ROOT, out)}`);
  } finally {
    await stopAll();
    ref.remove();
    if (!options.keep) rmSync(work, { recursive: true, force: true });
  }
}

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch(async (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(1);
  });
