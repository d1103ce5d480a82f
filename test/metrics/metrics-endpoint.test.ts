/**
 * GET /metrics's answers (src/runtime/host/metrics-endpoint.ts) for a given scrape: the exposition,
 * and a 503 problem, never a partial figure, when a cluster's workers cannot all be gathered.
 */
import { describe, expect, it } from "vitest";
import { createMetricsEndpoint } from "../../src/runtime/host/metrics-endpoint.js";

describe("the /metrics endpoint", () => {
  it("answers the scrape's exposition, never stored by a cache", async () => {
    const endpoint = createMetricsEndpoint(
      async () => ({ contentType: "text/plain; version=0.0.4", text: "up 1\n" }),
      undefined,
    );
    const res = await endpoint("GET", null);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe("up 1\n");
  });

  it("answers 503 with Retry-After when the workers' metrics cannot all be gathered", async () => {
    const endpoint = createMetricsEndpoint(async () => {
      throw new Error("the primary gathered no metrics within 6000 ms");
    }, undefined);
    const res = await endpoint("GET", null);
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ code: "UNAVAILABLE", detail: expect.stringContaining("6000 ms") });
  });

  it("asks for the token before it scrapes", async () => {
    let scraped = 0;
    const endpoint = createMetricsEndpoint(async () => {
      scraped++;
      return { contentType: "text/plain", text: "" };
    }, "s3cret");
    expect((await endpoint("GET", "Bearer wrong")).status).toBe(401);
    expect(scraped).toBe(0);
    expect((await endpoint("GET", "Bearer s3cret")).status).toBe(200);
    expect(scraped).toBe(1);
  });
});
