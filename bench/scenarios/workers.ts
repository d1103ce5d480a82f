/**
 * Scenario 7: CMS_WORKERS — the same small-file getData load (4 KiB, 64 keep-alive connections)
 * against the service with one process and with two cluster workers, interleaved. On a 2-core
 * machine wrk takes one core itself, so two workers can gain at most what the second core has left.
 */
import { type AppVariant, type Context, getDataPath, startApp, verifyAll } from "../lib/context.js";
import { type Sample, type WrkTarget, fmtRatio, measureInterleaved, metric, ratio, wrkTable } from "../lib/measure.js";
import type { Server } from "../lib/proc.js";
import type { Report } from "../lib/report.js";
import { fmtSummary, log } from "../lib/util.js";
import { prepareServeData } from "./serving.js";

const VARIANTS: { name: string; variant: AppVariant }[] = [
  { name: "app", variant: { runtime: "node" } },
  { name: "app-2-workers", variant: { runtime: "node", env: { CMS_WORKERS: "2" } } },
];

export async function workers(ctx: Context, report: Report): Promise<void> {
  const data = await prepareServeData(ctx);
  log("scenario 7: CMS_WORKERS, small files — starting servers");
  const servers: Server[] = [];
  try {
    for (const { name, variant } of VARIANTS) servers.push({ ...(await startApp(ctx, variant, data)), name });
    const targets: WrkTarget[] = servers.map((server) => ({
      name: server.name,
      url: `${server.url}${getDataPath(data.small.resourceURI)}`,
      server,
    }));
    const checked = await verifyAll(targets, { sha256: ctx.fixtures.small.sha256 });
    const samples: Map<string, Sample[]> = await measureInterleaved(checked.passed, {
      connections: 64,
      durationSec: ctx.options.duration,
      warmupSec: ctx.options.warmup,
      runs: ctx.options.runs,
      workDir: ctx.work,
    });
    report.raw.workers = Object.fromEntries(samples);
    const rps = ratio(samples.get("app-2-workers"), samples.get("app"), (s) => s.rps);
    report.check(
      "7 workers",
      "small-file req/s, CMS_WORKERS=2 / 1 (2 cores, wrk on one of them)",
      rps,
      fmtRatio,
      "(reported)",
      null,
    );
    report.section(
      "7. Several cores: CMS_WORKERS=2 vs 1",
      [
        "GET of one 4 KiB resource, 64 keep-alive connections, `wrk` with one thread. `app-2-workers` is the same build with `CMS_WORKERS=2`",
        "(node:cluster: the primary accepts and hands connections to the workers in turn); its server CPU and RSS are summed over",
        "the primary and both workers. With 2 cores and wrk on one of them, this shows the cost and what is left to gain, not a scaling figure.",
        "",
        wrkTable(samples),
        "",
        `req/s ratio \`app-2-workers\` / \`app\`: ${fmtRatio(rps)}; p99 ratio ${fmtRatio(ratio(samples.get("app-2-workers"), samples.get("app"), (s) => s.p99Ms))}; server CPU ${VARIANTS.map((v) => `${v.name} ${fmtSummary(metric(samples.get(v.name), (s) => s.serverCpu))}`).join(", ")}.`,
      ].join("\n"),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}
