/**
 * Issue 28 §5, each figure a ratio or a share measured in one run:
 * - the service behind a stock nginx proxy_cache (test/helpers/nginx-cache.ts: it honours the
 *   origin's headers, nothing overridden) against the reference nginx serving the same 4 KiB file:
 *   req/s and origin offload (share of requests nginx answered without the origin) for the
 *   versioned URL (immutable) and the mutable URL under CMS_CACHE_MAX_AGE=1;
 * - the Worker as deployed on workerd (Miniflare, test/helpers/workerd.ts): req/s of a public
 *   versioned URL (a caches.default hit after the first) against the mutable URL (no-cache: every
 *   request a miss, with its D1 query and R2 read).
 * One wrk run per target (duration, 64 connections), after a warm-up; indicative on a shared box.
 */
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { startNginxCache } from "../../test/helpers/nginx-cache.js";
import { bundleWorker, startWorkerd } from "../../test/helpers/workerd.js";
import { type Context, getDataPath, startApp } from "../lib/context.js";
import type { Report } from "../lib/report.js";
import { KiB, fmtSummary, log, summarize } from "../lib/util.js";
import { type WrkResult, runWrk } from "../lib/wrk.js";
import { prepareServeData } from "./serving.js";

const CONNECTIONS = 64;

async function wrk(ctx: Context, url: string): Promise<WrkResult> {
  const common = { url, connections: CONNECTIONS, workDir: ctx.work };
  await runWrk({ ...common, durationSec: ctx.options.warmup });
  const result = await runWrk({ ...common, durationSec: ctx.options.duration });
  const failed = result.errors.status + result.errors.connect + result.errors.read;
  if (failed > 0) throw new Error(`${url}: ${failed} failed requests (${JSON.stringify(result.errors)})`);
  return result;
}

const one = (value: number) => summarize([value]);
const pct = (s: { median: number }) => `${(100 * s.median).toFixed(2)} %`;

export async function edgeCache(ctx: Context, report: Report): Promise<void> {
  const data = await prepareServeData(ctx);
  const { resourceURI, sha256 } = data.small;
  const mutablePath = getDataPath(resourceURI);
  const versionedPath = `${mutablePath}?v=${sha256.slice(0, 16)}`;
  log("scenario edge: the service behind nginx proxy_cache, against nginx serving the file");
  const app = await startApp(ctx, { runtime: "node", env: { CMS_CACHE_MAX_AGE: "1" } }, data);
  const cache = await startNginxCache(app.url);
  const rows: string[] = [];
  try {
    const reference = await wrk(ctx, `${ctx.nginx.url}/${ctx.fixtures.small.name}`);
    rows.push(`| nginx serving the file | ${Math.round(reference.rps)} | – |`);
    for (const [what, urlPath] of [
      ["versioned URL (immutable)", versionedPath],
      ["mutable URL, CMS_CACHE_MAX_AGE=1", mutablePath],
    ] as const) {
      const before = await cache.originRequests(urlPath);
      const totalBefore = (await cache.log()).filter((l) => l.request.includes(urlPath)).length;
      const result = await wrk(ctx, cache.url(urlPath));
      const origin = (await cache.originRequests(urlPath)) - before;
      const total = (await cache.log()).filter((l) => l.request.includes(urlPath)).length - totalBefore;
      const offload = 1 - origin / Math.max(1, total);
      rows.push(
        `| through proxy_cache: ${what} | ${Math.round(result.rps)} | ${pct(one(offload))} (${origin} of ${total} at the origin) |`,
      );
      report.check(
        "edge",
        `${what}: req/s through proxy_cache / nginx static`,
        one(result.rps / reference.rps),
        (s) => `${fmtSummary(s, 2)}×`,
        "info",
        null,
      );
      report.check("edge", `${what}: origin offload`, one(offload), pct, "info", null);
    }
  } finally {
    await cache.close();
    await app.stop();
  }
  report.section(
    "edge: nginx proxy_cache in front of the service (4 KiB)",
    `| what | req/s | origin offload |\n|---|---|---|\n${rows.join("\n")}\n\nThe cache's access log (one line per request) is on; the reference nginx logs nothing.`,
  );

  log("scenario edge: workerd, a Cache API hit against a miss");
  const dir = await mkdtemp(path.join(ctx.work, "workerd-"));
  const worker = await startWorkerd(await bundleWorker(path.join(dir, "bundle")), {
    bindings: { CMS_LOG_LEVEL: "warn" },
    persistDir: path.join(dir, "state"),
    onLog: () => {},
  });
  try {
    const bytes = new Uint8Array(4 * KiB).map((_, i) => (i * 13) & 0xff);
    const created = await fetch(`${worker.url}/cms/v1.0/createResource`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceAuthor: "bench",
        resourceBinary: Buffer.from(bytes).toString("base64"),
        resourceMediaType: "application/octet-stream",
        resourceName: "edge.bin",
        resourceTenantId: "bench",
      }),
    });
    if (created.status !== 201) throw new Error(`createResource on workerd: ${created.status} ${await created.text()}`);
    const { resourceURI: uri, versionedURI } = (await created.json()) as { resourceURI: string; versionedURI: string };
    const hit = await wrk(ctx, `${worker.url}${getDataPath(versionedURI)}`);
    const miss = await wrk(ctx, `${worker.url}${getDataPath(uri)}`);
    report.check(
      "edge",
      "workerd: Cache API hit / miss req/s",
      one(hit.rps / miss.rps),
      (s) => `${fmtSummary(s, 2)}×`,
      "info",
      null,
    );
    report.section(
      "edge: workerd, caches.default hit vs miss (4 KiB)",
      `| what | req/s | p50 ms |\n|---|---|---|\n| hit (versioned URL) | ${Math.round(hit.rps)} | ${hit.p50Ms} |\n| miss (mutable URL, no-cache: D1 + R2) | ${Math.round(miss.rps)} | ${miss.p50Ms} |`,
    );
  } finally {
    await worker.close();
    await rm(dir, { recursive: true, force: true });
  }
}
