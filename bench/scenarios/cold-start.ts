/**
 * Scenario 5: cold start, process spawn → first 200 on /apiversion, on an existing volume and
 * database (a restart). Node as shipped (`node dist/node/server.mjs`, built by scripts/build.mjs),
 * Node the development way (`node --import tsx src/node.ts`, for comparison), Bun (`bun src/bun.ts`),
 * and the bare runtimes' own floor (a node:http / Bun.serve one-liner).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { type Context, shippedServer } from "../lib/context.js";
import { statusField } from "../lib/proc.js";
import { table } from "../lib/measure.js";
import type { Report } from "../lib/report.js";
import { fmtRatio, freePort, fmtSummary, http, interleave, log, sleep, summarize } from "../lib/util.js";

interface Variant {
  name: string;
  what: string;
  command: string;
  args: string[];
  /** Another commit's build (--baseline) runs from its own tree, on its own volume and database (its migrations may be older). */
  cwd?: string;
  env?: Record<string, string>;
}

const BARE_NODE = `require("node:http").createServer((q, s) => s.end("{}")).listen(+process.env.PORT, "127.0.0.1")`;
const BARE_BUN = `Bun.serve({ hostname: "127.0.0.1", port: +process.env.PORT, fetch: () => new Response("{}") })`;

/**
 * How long after the first 200 the idle RSS is read: start-up's garbage is collected by then, and the
 * image library, loaded a second after listening (runtime/host/bootstrap.ts `warmImages`), is counted.
 */
const SETTLE_MS = 2000;

/**
 * Spawns, polls /apiversion every 2 ms, returns ms from spawn to the first 200 and the process's
 * RSS (VmRSS, MiB) SETTLE_MS later, idle; kills the process.
 */
async function timeToFirst200(
  variant: Variant,
  env: Record<string, string>,
  cwd: string,
): Promise<{ ms: number; idleRssMiB: number }> {
  const port = await freePort();
  const started = performance.now();
  const child: ChildProcess = spawn(variant.command, variant.args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...env,
      PORT: String(port),
      CMS_PORT: String(port),
      CMS_HOST: "127.0.0.1",
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const deadline = started + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${variant.name} exited (${child.exitCode}): ${stderr}`);
      try {
        const res = await http(`http://127.0.0.1:${port}/apiversion`, { timeoutMs: 5000 });
        if (res.status === 200) {
          const ms = performance.now() - started;
          await sleep(SETTLE_MS);
          return { ms, idleRssMiB: statusField(child.pid ?? 0, "VmRSS") / 1048576 };
        }
      } catch {
        // not listening yet
      }
      if (performance.now() > deadline) throw new Error(`${variant.name}: no 200 within 30 s: ${stderr}`);
      await sleep(2);
    }
  } finally {
    child.kill("SIGKILL");
    await Promise.race([exited, sleep(5000)]);
  }
}

export async function coldStart(ctx: Context, report: Report): Promise<void> {
  const runs = Math.max(5, ctx.options.runs * 2);
  const dir = path.join(ctx.work, "cold");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const env = {
    CMS_VOLUME: path.join(dir, "volume"),
    CMS_DATABASE_URL: `file:${path.join(dir, "cms.db")}`,
    CMS_LOG_LEVEL: "info",
  };
  const server = await shippedServer();
  const variants: Variant[] = [
    {
      name: "node",
      what: "`node dist/node/server.mjs` (as shipped: `npm start`; esbuild bundle by scripts/build.mjs)",
      command: process.execPath,
      args: [server],
    },
    {
      name: "node-tsx",
      what: "`node --import tsx src/node.ts` (development, no build step)",
      command: process.execPath,
      args: ["--import", "tsx", "src/node.ts"],
    },
    ...(ctx.bun ? [{ name: "bun", what: "`bun src/bun.ts`", command: ctx.bun, args: ["src/bun.ts"] }] : []),
    {
      name: "bare-node",
      what: "node:http one-liner (runtime floor)",
      command: process.execPath,
      args: ["-e", BARE_NODE],
    },
    ...(ctx.bun
      ? [{ name: "bare-bun", what: "Bun.serve one-liner (runtime floor)", command: ctx.bun, args: ["-e", BARE_BUN] }]
      : []),
    ...(ctx.baseline
      ? [
          {
            name: "node@base",
            what: `the same at ${ctx.baseline.ref} (${ctx.baseline.commit}; \`--baseline\`)`,
            command: process.execPath,
            args: [ctx.baseline.server],
            cwd: ctx.baseline.dir,
            env: { CMS_VOLUME: path.join(dir, "base-volume"), CMS_DATABASE_URL: `file:${path.join(dir, "base.db")}` },
          },
        ]
      : []),
  ];
  log(`scenario 5/6: cold start, ${variants.length} variants × ${runs} runs`);
  // The first start creates and migrates the database; measured starts are restarts, as in production.
  for (const v of [...variants]) {
    try {
      await timeToFirst200(v, { ...env, ...v.env }, v.cwd ?? ctx.root);
    } catch (err) {
      log(`  ${v.name} does not start, dropped: ${(err as Error).message.slice(0, 300)}`);
      variants.splice(variants.indexOf(v), 1);
    }
  }
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  const idleRss = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  await interleave(variants, runs, async (v, run) => {
    try {
      const { ms, idleRssMiB } = await timeToFirst200(v, { ...env, ...v.env }, v.cwd ?? ctx.root);
      (times.get(v.name) as number[])[run] = ms;
      (idleRss.get(v.name) as number[])[run] = idleRssMiB;
    } catch (err) {
      // e.g. stopped by another suite's cleanup on a shared machine: lose the run, not the scenario.
      log(`  ${v.name} run ${run + 1} skipped: ${(err as Error).message.slice(0, 300)}`);
    }
  });
  for (const v of variants) log(`  ${v.name.padEnd(12)} ${fmtSummary(summarize(times.get(v.name) ?? []))} ms`);
  report.raw.coldStart = Object.fromEntries(times);
  report.raw.idleRss = Object.fromEntries(idleRss);
  const mib = (s: ReturnType<typeof summarize>) => `${fmtSummary(s)} MiB`;
  report.check(
    "5 cold start",
    `Node as shipped: RSS ${SETTLE_MS} ms after the first 200 (idle)`,
    summarize(idleRss.get("node") ?? []),
    mib,
    "(reported; the streaming peak's baseline)",
    null,
  );
  report.check(
    "5 cold start",
    `bare node:http: RSS ${SETTLE_MS} ms after the first 200 (runtime floor)`,
    summarize(idleRss.get("bare-node") ?? []),
    mib,
    "(context)",
    null,
  );
  const ms = (s: ReturnType<typeof summarize>) => `${fmtSummary(s)} ms`;
  report.check(
    "5 cold start",
    "Node as shipped (`node dist/node/server.mjs`): spawn → first 200 /apiversion",
    summarize(times.get("node") ?? []),
    ms,
    "< 300 ms",
    (m) => m < 300,
  );
  if (times.has("node-tsx")) {
    report.check(
      "5 cold start",
      "Node through tsx (`node --import tsx src/node.ts`, development)",
      summarize(times.get("node-tsx") ?? []),
      ms,
      "(for comparison)",
      null,
    );
  }
  if (times.has("bun"))
    report.check("5 cold start", "Bun: spawn → first 200", summarize(times.get("bun") ?? []), ms, "(reported)", null);
  const perRun = (a: string, b: string) =>
    summarize((times.get(a) ?? []).map((t, i) => t / (times.get(b)?.[i] ?? Number.NaN)));
  report.delta(
    "cold start: `node` / `node-tsx`",
    perRun("node", "node-tsx"),
    "the build step (dist/node/server.mjs instead of tsx; lower is better)",
    fmtRatio,
  );
  if (times.has("node@base")) {
    report.delta(
      "cold start: `node` / `node@base`",
      perRun("node", "node@base"),
      `today's build against ${ctx.baseline?.ref}'s, per round (lower is better)`,
      fmtRatio,
    );
  }
  report.section(
    "5. Cold start",
    [
      `Time from spawn() to the first 200 on /apiversion (polled every 2 ms), ${runs} interleaved runs each, on an existing volume and database; idle RSS is VmRSS ${SETTLE_MS} ms after that 200.`,
      "",
      table(
        ["variant", "ms to first 200", `idle RSS, MiB (${SETTLE_MS} ms later)`, "what"],
        variants.map((v) => [
          `\`${v.name}\``,
          fmtSummary(summarize(times.get(v.name) ?? [])),
          fmtSummary(summarize(idleRss.get(v.name) ?? [])),
          v.what,
        ]),
      ),
    ].join("\n"),
  );
  rmSync(dir, { recursive: true, force: true });
}
