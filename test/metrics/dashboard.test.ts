/**
 * docs/grafana-dashboard.json queries only metrics a real server exposes: every metric name in its
 * PromQL is found in a scrape of GET /metrics after a few requests (an image transform among them),
 * and each panel plots one unit, the one it declares; docs/metrics.md's table names every family.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import sharp from "sharp";
import { API, cmsClient } from "../helpers/cms-client.js";
import { parsePromText } from "../helpers/prom-text.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

interface Dashboard {
  panels: { title: string; targets: { expr: string }[]; fieldConfig: { defaults: { unit: string } } }[];
  templating: { list: { query: string }[] };
}

/**
 * What a query plots, from the metric naming conventions: a ratio of two rates, a quantile of a
 * seconds histogram, a rate of bytes or of events, or a gauge in seconds, bytes or a plain count.
 */
function unitOf(expr: string): string {
  if (expr.includes("histogram_quantile(")) return "s";
  if (/\)\s*\/\s*sum/.test(expr)) return "percentunit";
  const name = metricNames(expr)[0] ?? "";
  if (expr.includes("rate(")) return name.endsWith("_bytes_total") ? "Bps" : "per second";
  if (name.endsWith("_seconds")) return "s";
  return name.endsWith("_bytes") ? "bytes" : "short";
}

/** Grafana's units of one kind: requests and other events per second are both "per second". */
const kindOf = (unit: string) => (unit === "reqps" || unit === "ops" ? "per second" : unit);

/** Metric names in a PromQL expression: this service's and prom-client's families. */
const metricNames = (expr: string) => [...expr.matchAll(/\b(?:cms|process|nodejs)_[a-z0-9_]+\b/g)].map((m) => m[0]);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ CMS_METRICS_ENABLED: "true" });
});
afterAll(async () => app?.close());

describe("docs/grafana-dashboard.json", () => {
  it("queries only metrics a scrape of /metrics has", async () => {
    const dashboard = JSON.parse(await readFile("docs/grafana-dashboard.json", "utf8")) as Dashboard;
    const cms = cmsClient(app, "dash");
    const created = await cms.create();
    await cms.data(created.resourceURI);
    // An image transform: made once (a miss), then found stored (a hit).
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#36c" } })
      .png()
      .toBuffer();
    const image = await cms.create({ resourceName: "dot.png", resourceMediaType: "image/png" }, png);
    for (let i = 0; i < 2; i++) {
      const res = await fetch(app.url(`${API}/getData/${image.resourceURI}?width=4`));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // Problem codes have a series once one was answered.
    expect((await cms.get("getDataUuid/no-such-resource")).status).toBe(404);
    const scraped = parsePromText(await (await fetch(app.url("/metrics"))).text());
    const present = new Set(scraped.samples.map((s) => s.name));

    const exprs = [
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
      ...dashboard.templating.list.map((v) => v.query),
    ];
    const names = new Set(exprs.flatMap(metricNames));
    expect(names.size).toBeGreaterThan(10);
    expect([...names].filter((name) => !present.has(name))).toEqual([]);
    // What the issue asks the dashboard to show.
    const titles = dashboard.panels.map((p) => p.title).join(" | ");
    for (const topic of [
      /request rate/i,
      /error/i,
      /p50/,
      /p99/,
      /bytes/i,
      /cache hit/i,
      /database busy/i,
      /ingest rate/i,
      /webhook deliveries.*retries.*failures/i,
      /webhook lag/i,
      /image transforms by outcome/i,
      /image transform time/i,
      /image cache hit/i,
    ])
      expect(titles).toMatch(topic);
    // The series the operations docs promise for webhooks and image transforms, with samples.
    for (const name of [
      "cms_webhook_deliveries_total",
      "cms_webhook_outbox_pending",
      "cms_webhook_oldest_pending_seconds",
      "cms_image_transforms_total",
      "cms_image_transform_duration_seconds_bucket",
      "cms_image_cache_lookups_total",
    ])
      expect(present, name).toContain(name);
    // docs/metrics.md's table names every family of this service a scrape has.
    const documented = await readFile("docs/metrics.md", "utf8");
    const families = [...scraped.types.keys()].filter((name) => name.startsWith("cms_"));
    expect(families.filter((name) => !documented.includes(`\`${name}`))).toEqual([]);
    expect(scraped.value("cms_image_transforms_total", { outcome: "made" })).toBe(1);
    expect(scraped.value("cms_image_transform_duration_seconds_count", { outcome: "made" })).toBe(1);
    expect(scraped.value("cms_image_cache_lookups_total", { result: "miss" })).toBe(1);
    expect(scraped.value("cms_image_cache_lookups_total", { result: "hit" })).toBeGreaterThanOrEqual(1);
  });

  it("plots one unit per panel, the one the panel declares", async () => {
    const dashboard = JSON.parse(await readFile("docs/grafana-dashboard.json", "utf8")) as Dashboard;
    const mixed = dashboard.panels
      .map((p) => ({
        title: p.title,
        declared: kindOf(p.fieldConfig.defaults.unit),
        plotted: [...new Set(p.targets.map((t) => unitOf(t.expr)))],
      }))
      .filter((p) => p.plotted.length !== 1 || p.plotted[0] !== p.declared);
    expect(mixed).toEqual([]);
  });
});
