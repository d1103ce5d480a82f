/**
 * `npm run bench`: installs what it needs, runs every scenario on 127.0.0.1 and writes
 * bench/RESULTS.md (+ bench/RESULTS.json with every sample). Not part of `npm test`.
 *
 *   npm run bench                      full run (≈ 15 min on 2 cores)
 *   npm run bench -- --quick           smoke run: short runs, smaller files (indicative only)
 *   npm run bench -- --only=small,cold --runs=5 --duration=8 --keep
 *   npm run bench -- --only=cold,ingest --baseline=<git ref>   today's build against that commit's
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
  const value = (name: string) => flag(name)?.split("=")[1];
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

main()
  .then(() => process.exit(process.exitCode ?? 0))
  .catch(async (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(1);
  });
