/**
 * docs/grafana-dashboard.json queries only metrics a real server exposes: every metric name in its
 * PromQL is found in a scrape of GET /metrics after a few requests.
 */
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cmsClient } from "../helpers/cms-client.js";
import { parsePromText } from "../helpers/prom-text.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { query: string }[] };
}

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
    ])
      expect(titles).toMatch(topic);
  });
});
