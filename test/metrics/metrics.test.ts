/**
 * GET /metrics on a real Node server on 127.0.0.1, scraped and parsed as Prometheus would
 * (test/helpers/prom-text.ts): opt-in, behind its bearer token, counters that move as requests are
 * made, route templates instead of paths, and a W3C traceparent carried on to a real loopback origin.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { parsePromText, type Scrape } from "../helpers/prom-text.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const TOKEN = "metrics-token-0123456789abcdef";
const GET_DATA = "/cms/v1.0/getData/:context/:path";
const TUS = { "tus-resumable": "1.0.0" };

let app: TestApp;
let off: TestApp;
let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  app = await startTestApp({
    CMS_METRICS_ENABLED: "true",
    CMS_METRICS_TOKEN: TOKEN,
    CMS_QUOTA_OVERRIDES: JSON.stringify({ tight: { resources: 1 } }),
  });
  off = await startTestApp();
});
afterAll(async () => {
  await app?.close();
  await off?.close();
  await origin?.close();
});

async function scrape(target = app): Promise<Scrape> {
  const res = await fetch(target.url("/metrics"), { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePromText(await res.text());
}

/** The value of `name` once the request that moved it has been logged (the count is taken when the answer is over). */
async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (done(value) || i > 50) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("GET /metrics", () => {
  it("is not there unless CMS_METRICS_ENABLED=true", async () => {
    await expectProblem(await fetch(off.url("/metrics")), 404, "NOT_FOUND");
  });

  it("answers 401 without the bearer token, or with another one", async () => {
    const none = await expectProblem(
      await fetch(app.url("/metrics")),
      401,
      "UNAUTHENTICATED",
      "/headers/authorization",
    );
    expect(none.detail).not.toContain(TOKEN);
    const wrong = await fetch(app.url("/metrics"), { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    await expectProblem(wrong, 401, "UNAUTHENTICATED");
    await expectProblem(
      await fetch(app.url("/metrics"), { headers: { authorization: TOKEN } }),
      401,
      "UNAUTHENTICATED",
    );
    await expectProblem(
      await fetch(app.url("/metrics"), { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } }),
      405,
      "METHOD_NOT_ALLOWED",
    );
  });

  it("has prom-client's process and event-loop metrics and this instance's id", async () => {
    const s = await scrape();
    expect(s.find("process_cpu_user_seconds_total")).toHaveLength(1);
    expect(s.find("process_resident_memory_bytes")).toHaveLength(1);
    expect(s.find("nodejs_eventloop_lag_p99_seconds")).toHaveLength(1);
    expect(s.find("cms_instance_info")[0]?.labels.id).toMatch(/.+:\d+$/);
    expect(s.types.get("cms_http_request_duration_seconds")).toBe("histogram");
  });

  it("counts requests by route template, status and bytes, the fast path's included", async () => {
    const cms = cmsClient(app, "counted");
    const created = await cms.create({}, "x".repeat(4096));
    const before = await scrape();
    const labels = { method: "GET", route: GET_DATA, status: "200" };
    for (let i = 0; i < 5; i++) expect((await cms.data(created.resourceURI)).length).toBe(4096);
    const uid = await cms.get(`getDataUuid/${created.resourceUID}`);
    expect(uid.status).toBe(200);
    await uid.arrayBuffer();
    const after = await settled(
      scrape,
      (s) => s.value("cms_http_requests_total", labels) >= before.value("cms_http_requests_total", labels) + 5,
    );

    expect(after.value("cms_http_requests_total", labels) - before.value("cms_http_requests_total", labels)).toBe(5);
    const uidRoute = { method: "GET", route: "/cms/v1.0/getDataUuid/:resourceUID", status: "200" };
    expect(after.value("cms_http_requests_total", uidRoute) - before.value("cms_http_requests_total", uidRoute)).toBe(
      1,
    );
    const timing = { method: "GET", route: GET_DATA };
    const count = (s: Scrape) => s.value("cms_http_request_duration_seconds_count", timing);
    expect(count(after) - count(before)).toBe(5);
    const inf = after.find("cms_http_request_duration_seconds_bucket", { ...timing, le: "+Inf" });
    expect(inf[0]?.value).toBe(count(after));
    expect(after.value("cms_http_request_duration_seconds_sum", timing)).toBeGreaterThan(0);
    const sent = (s: Scrape) => s.value("cms_http_sent_bytes_total", timing);
    expect(sent(after) - sent(before)).toBeGreaterThan(5 * 4096);
    const received = (s: Scrape) => s.value("cms_http_received_bytes_total", timing);
    expect(received(after) - received(before)).toBeGreaterThan(5 * 50); // five request heads at least
    // The blob cache serves repeats once its background fill after the first read is done (under a
    // loaded full run the five reads above could all come before it).
    const hits = (s: Scrape) => s.value("cms_blob_cache_lookups_total", { result: "hit" });
    await expect
      .poll(async () => (await cms.data(created.resourceURI)).length > 0 && hits(await scrape()) > hits(before), {
        timeout: 10_000,
        interval: 50,
      })
      .toBe(true);
    expect(after.find("cms_row_cache_lookups_total", { result: "hit" })).toHaveLength(1);
    // No sample names a resource's path.
    expect(after.samples.some((s) => Object.values(s.labels).some((v) => v.includes(created.resourceURI)))).toBe(false);
  });

  it("counts ingests, origin fetch outcomes, quota refusals and collector passes", async () => {
    const before = await scrape();
    const cms = cmsClient(app, "ingesting");
    origin.put("five", "12345");
    await cms.create({ resourceExternalURI: origin.url("/bytes/five"), resourceBinary: undefined });
    const failed = await cms.postCreate({ resourceExternalURI: origin.url("/status/500"), resourceBinary: undefined });
    await expectProblem(failed, 502, "ORIGIN_FAILED");
    const tight = cmsClient(app, "tight");
    await tight.create();
    await expectProblem(await tight.postCreate(), 507, "QUOTA_EXCEEDED");
    await app.deps.collector.pass();
    const after = await scrape();
    const delta = (name: string, labels?: Record<string, string>) =>
      after.value(name, labels) - before.value(name, labels);
    // The origin's five bytes and tight's first "hello" (the refused one may have been stored before its refusal).
    expect(delta("cms_ingests_total")).toBeGreaterThanOrEqual(2);
    expect(delta("cms_ingested_bytes_total")).toBe(5 * delta("cms_ingests_total"));
    expect(delta("cms_origin_fetches_total", { outcome: "ok" })).toBe(1);
    expect(delta("cms_origin_fetches_total", { outcome: "failed" })).toBe(1);
    expect(delta("cms_quota_refusals_total")).toBe(1);
    expect(delta("cms_problems_total", { code: "QUOTA_EXCEEDED" })).toBe(1);
    expect(delta("cms_collector_passes_total")).toBe(1);
    expect(after.find("cms_collector_removed_blobs_total")).toHaveLength(1);
    expect(after.find("cms_database_errors_total", { kind: "busy" })).toHaveLength(1);
  });

  it("reads the pending tus uploads when scraped", async () => {
    const before = (await scrape()).value("cms_tus_pending_uploads");
    const res = await fetch(app.url(`${API}/uploads`), {
      method: "POST",
      headers: {
        ...TUS,
        "upload-length": "10",
        "upload-metadata": `tenant ${btoa("tusser")},filename ${btoa("a.txt")},author ${btoa("T")}`,
      },
    });
    expect(res.status, await res.text()).toBe(201);
    expect((await scrape()).value("cms_tus_pending_uploads")).toBe(before + 1);
  });

  it("keeps the series few when 500 distinct paths are asked for", async () => {
    const series = (s: Scrape) => s.find("cms_http_requests_total").length;
    const before = series(await scrape());
    for (let i = 0; i < 250; i++) {
      await (await fetch(app.url(`${API}/getData/ctx${i}/missing-${i}.txt`))).arrayBuffer();
      await (await fetch(app.url(`/no/such/${i}`), { method: i % 2 ? "GET" : "PROPFIND" })).arrayBuffer();
    }
    const after = await settled(scrape, (s) => s.value("cms_http_requests_total", { route: "unmatched" }) >= 250);
    expect(after.value("cms_http_requests_total", { route: "unmatched" })).toBeGreaterThanOrEqual(250);
    // getData 404, unmatched GET 404, unmatched OTHER (PROPFIND): a handful, not 500.
    expect(series(after) - before).toBeLessThanOrEqual(4);
    expect(series(after)).toBeLessThan(40);
    expect(after.find("cms_http_requests_total", { method: "PROPFIND" })).toHaveLength(0);
    expect(after.find("cms_http_requests_total", { method: "OTHER", route: "unmatched" })).toHaveLength(1);
  });
});

describe("traceparent", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const incoming = `00-${TRACE}-00f067aa0ba902b7-01`;

  it("is logged with the request and passed on to the origin fetch as a child span", async () => {
    origin.put("traced", "traced bytes");
    const res = await fetch(app.url(`${API}/createResource`), {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: incoming, "x-request-id": "traced-1" },
      body: JSON.stringify({
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceName: "t.txt",
        resourceTenantId: "tracing",
        resourceExternalURI: origin.url("/bytes/traced"),
      }),
    });
    expect(res.status, await res.text()).toBe(201);
    const seen = origin.requests.find((r) => r.url === "/bytes/traced");
    const sent = seen?.headers.traceparent as string;
    expect(sent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(sent.split("-")[2]).not.toBe("00f067aa0ba902b7");
    expect(sent.split("-")[2]).not.toBe("0000000000000000");
    const line = await settled(
      async () => app.logs.find((l) => l.msg === "request" && l.requestId === "traced-1"),
      (l) => l !== undefined,
    );
    expect(line?.traceparent).toBe(incoming);
  });

  it.each([
    ["malformed", "00-xyz-00f067aa0ba902b7-01"],
    ["an all-zero trace id", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`],
    ["version ff", `ff-${TRACE}-00f067aa0ba902b7-01`],
  ])("is ignored when %s", async (_label, header) => {
    const name = `untraced-${header.length}-${header.slice(0, 2)}${header.charCodeAt(4)}`;
    origin.put(name, "no trace");
    const requestId = `untraced-${name}`;
    const res = await fetch(app.url(`${API}/createResource`), {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: header, "x-request-id": requestId },
      body: JSON.stringify({
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceName: "t.txt",
        resourceTenantId: "tracing",
        resourceExternalURI: origin.url(`/bytes/${name}`),
      }),
    });
    expect(res.status, await res.text()).toBe(201);
    expect(origin.requests.find((r) => r.url === `/bytes/${name}`)?.headers.traceparent).toBeUndefined();
    const line = await settled(
      async () => app.logs.find((l) => l.msg === "request" && l.requestId === requestId),
      (l) => l !== undefined,
    );
    expect(line).toBeDefined();
    expect(line?.traceparent).toBeUndefined();
  });
});
