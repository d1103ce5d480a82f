/** Interleaved wrk measurements over several targets, per-run ratios, and markdown rendering. */
import type { Server } from "./proc.js";
import { type WrkResult, runWrk, totalErrors } from "./wrk.js";
import { type Summary, MiB, fmt, fmtRatio, fmtSummary, interleave, log, summarize } from "./util.js";

export interface WrkTarget {
  name: string;
  url: string;
  server: Server;
  /**
   * Starts a new process of this server. Given, each round after the first measures a fresh process
   * (stopped, started, warmed up): two processes of the same build differed by 25 % in req/s in
   * every one of six rounds (an A/A test, both pinned to one core), so a target measured in one
   * process carries that process's luck (memory layout, JIT decisions) into every round and ratio.
   */
  restart?: () => Promise<Server>;
}

export interface Sample extends WrkResult {
  /** Peak RSS of the server during this run (VmHWM reset before it), MiB. */
  peakRssMiB: number;
  /** RSS just before the run (after the warm-up), MiB. */
  rssBeforeMiB: number;
}

export interface WrkPlan {
  connections: number;
  durationSec: number;
  warmupSec: number;
  runs: number;
  timeoutSec?: number;
  lua?: string;
  workDir: string;
  /** Run number shown in the progress log for the first round (when called once per round). */
  firstRunLabel?: number;
}

/** Warm each target up once, then `runs` interleaved rounds (a fresh process per round where a target can restart). Returns the samples per target, in run order. */
export async function measureInterleaved(targets: WrkTarget[], plan: WrkPlan): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  const warmUp = (target: WrkTarget) =>
    runWrk({
      url: target.url,
      connections: plan.connections,
      durationSec: plan.warmupSec,
      timeoutSec: plan.timeoutSec,
      lua: plan.lua,
      workDir: plan.workDir,
    });
  for (const target of targets) if (plan.warmupSec > 0) await warmUp(target);
  await interleave(targets, plan.runs, async (target, run) => {
    if (run > 0 && target.restart && !target.server.exited()) {
      const path = target.url.slice(target.server.url.length);
      await target.server.stop();
      target.server = await target.restart();
      target.url = `${target.server.url}${path}`;
      if (plan.warmupSec > 0) await warmUp(target);
    }
    const gone = () => {
      const info = target.server.exited();
      return info
        ? `${target.name} had exited (code ${info.code}, signal ${info.signal}): run ${run + (plan.firstRunLabel ?? 1)} skipped`
        : null;
    };
    if (gone()) {
      log(`  ${gone()}`);
      return;
    }
    const rssBeforeMiB = target.server.rss() / MiB;
    target.server.resetPeak();
    let result: WrkResult;
    try {
      result = await runWrk({
        url: target.url,
        connections: plan.connections,
        durationSec: plan.durationSec,
        timeoutSec: plan.timeoutSec,
        lua: plan.lua,
        workDir: plan.workDir,
        cpuSeconds: target.server.cpuSeconds,
      });
    } catch (err) {
      // A server that died (crashed, or was killed by someone else on a shared machine) loses its
      // remaining runs, not the whole scenario; anything else is a harness error.
      const why = gone();
      if (!why)
        throw new Error(
          `${(err as Error).message.trim()}; ${target.name} is running; its stderr: ${target.server.stderr().slice(-1500) || "(empty)"}`,
        );
      log(`  ${why}`);
      return;
    }
    const sample = { ...result, peakRssMiB: target.server.peakRss() / MiB, rssBeforeMiB };
    (samples.get(target.name) as Sample[])[run] = sample;
    const errors = totalErrors(result);
    log(
      `  run ${run + (plan.firstRunLabel ?? 1)} ${target.name.padEnd(16)} ${fmt(result.rps).padStart(8)} req/s  ${fmt(result.mbps).padStart(7)} MB/s  p50 ${fmt(result.p50Ms)} ms  p99 ${fmt(result.p99Ms)} ms  cpu ${fmt(result.serverCpu, 2)}${errors ? `  ERRORS ${JSON.stringify(result.errors)}` : ""}`,
    );
  });
  return samples;
}

export const metric = (samples: Sample[] | undefined, pick: (s: Sample) => number): Summary =>
  summarize((samples ?? []).map(pick));

/** Per-run ratio a/b (same round, so both saw the same machine state), summarised. */
export function ratio(a: Sample[] | undefined, b: Sample[] | undefined, pick: (s: Sample) => number): Summary {
  const values: number[] = [];
  for (let i = 0; i < Math.min(a?.length ?? 0, b?.length ?? 0); i++) {
    const x = a?.[i];
    const y = b?.[i];
    if (x && y) values.push(pick(x) / pick(y));
  }
  return summarize(values);
}

export function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const numeric = (h: string) => /req\/s|\bms\b|µs|MB\/s|MiB|ratio|objects|seconds|cores|errors|\/s$/.test(h);
  return [line(headers), line(headers.map((h) => (numeric(h) ? "--:" : "---"))), ...rows.map(line)].join("\n");
}

/** The standard per-target table for a wrk scenario. */
export function wrkTable(
  samples: Map<string, Sample[]>,
  notes: Record<string, string> = {},
  options: { mbps?: boolean; rps?: boolean } = {},
): string {
  const showRps = options.rps ?? true;
  const headers = [
    "server",
    ...(showRps ? ["req/s"] : []),
    ...(options.mbps ? ["MB/s"] : []),
    "p50 ms",
    "p99 ms",
    "server CPU (cores)",
    "RSS before MiB",
    "peak RSS MiB",
    "errors",
    "what",
  ];
  const rows = [...samples].map(([name, runs]) => [
    `\`${name}\``,
    ...(showRps ? [fmtSummary(metric(runs, (s) => s.rps))] : []),
    ...(options.mbps ? [fmtSummary(metric(runs, (s) => s.mbps))] : []),
    fmtSummary(metric(runs, (s) => s.p50Ms)),
    fmtSummary(metric(runs, (s) => s.p99Ms)),
    fmtSummary(
      metric(runs, (s) => s.serverCpu),
      2,
    ),
    fmtSummary(metric(runs, (s) => s.rssBeforeMiB)),
    fmtSummary(metric(runs, (s) => s.peakRssMiB)),
    String(runs.reduce((n, s) => n + totalErrors(s), 0)),
    notes[name] ?? "",
  ]);
  return table(headers, rows);
}

export { fmtRatio, fmtSummary };
