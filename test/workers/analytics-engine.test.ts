/**
 * On Workers, what stands in for GET /metrics: with an Analytics Engine dataset bound as METRICS,
 * one data point per request, labelled with the route template, never the path. Miniflare's own
 * Analytics Engine cannot be read back locally, so the binding here is a recording stand-in with the
 * binding's one method (`writeDataPoint`); everything else is the real Worker in workerd.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";

beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

type Point = { indexes?: string[]; blobs?: string[]; doubles?: number[] };

describe("Analytics Engine binding", () => {
  it("writes one data point per request, with method, route template, status and duration", async () => {
    const points: Point[] = [];
    const bound = { ...env, CMS_INSTANCE_ID: "edge-1", METRICS: { writeDataPoint: (p: Point) => points.push(p) } };
    const app = createWorkerApp();
    for (const path of ["/cms/v1.0/getData/ctx/a.txt", "/cms/v1.0/getData/ctx/b.txt", "/healthz"]) {
      const res = await app.fetch(new Request(`http://worker.test${path}`), bound);
      await res.arrayBuffer();
    }
    expect(points).toHaveLength(3);
    expect(points[0]).toMatchObject({
      indexes: ["/cms/v1.0/getData/:context/:path"],
      blobs: ["GET", "/cms/v1.0/getData/:context/:path", "404", "edge-1"],
    });
    expect(points[2]?.blobs?.slice(1, 3)).toEqual(["/healthz", "200"]);
    expect(points.every((p) => typeof p.doubles?.[0] === "number")).toBe(true);
    expect(JSON.stringify(points)).not.toContain("a.txt");
  });

  it("writes nothing, and still answers, when no dataset is bound", async () => {
    const res = await createWorkerApp().fetch(new Request("http://worker.test/healthz"), env);
    expect(res.status).toBe(200);
  });
});
