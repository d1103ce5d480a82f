/** /apiversion, health, the explorer, unknown routes and wrong methods. */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cmsClient } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { getRaw } from "../helpers/host-request.js";
import { forwardTo } from "../helpers/forward.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());
afterEach(() => expect(app.unhandledErrors()).toEqual([]));

describe("meta endpoints", () => {
  it("answers /apiversion with exactly the anchor's text", async () => {
    const res = await app.fetch(app.url("/apiversion"), { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.text()).toBe('{"minVersion":1.0,"maxVersion":1.0,"versionContexts":{"1.0":"/cms/v1.0"}}');
  });

  it("is alive and ready", async () => {
    expect(await (await app.fetch(app.url("/healthz"))).json()).toEqual({ status: "ok" });
    const ready = await app.fetch(app.url("/readyz"));
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ok", checks: { database: "ok", storage: "ok" } });
  });

  it("honours a sane X-Request-Id and replaces an unsafe one", async () => {
    const kept = await app.fetch(app.url("/healthz"), { headers: { "x-request-id": "trace-123" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-123");
    const replaced = await app.fetch(app.url("/healthz"), { headers: { "x-request-id": "bad id with spaces" } });
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const line = app.logs.find((l) => l.msg === "request" && l.requestId === "trace-123");
    expect(line).toMatchObject({ method: "GET", path: "/healthz", status: 200 });
    expect(typeof line?.durationMs).toBe("number");
  });

  it("answers a CORS preflight for any origin, with the headers browsers need", async () => {
    const res = await app.fetch(app.url("/cms/v1.0/createResource"), {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-allow-methods")?.split(",")).toEqual(
      expect.arrayContaining(["GET", "POST"]),
    );
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase().split(",")).toEqual(
      expect.arrayContaining(["authorization", "content-type", "range", "if-none-match"]),
    );
    expect(res.headers.get("access-control-max-age")).toBe("600");
  });

  it("lets a preflight send every conditional header the API honours, and only the methods routes have", async () => {
    const res = await app.fetch(app.url("/cms/v1.0/getData/x/y"), {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": "GET",
        "access-control-request-headers": "if-unmodified-since",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-headers")?.toLowerCase().split(",")).toEqual(
      expect.arrayContaining(["if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "if-range"]),
    );
    // No route answers PUT: a preflight must not promise it (PATCH and DELETE: tus uploads).
    expect(res.headers.get("access-control-allow-methods")?.split(",").sort()).toEqual([
      "DELETE",
      "GET",
      "HEAD",
      "PATCH",
      "POST",
    ]);
  });

  it("exposes Retry-After (423, 503) and Allow (405) to scripts", async () => {
    const res = await app.fetch(app.url("/apiversion"), {
      method: "DELETE",
      headers: { origin: "https://app.example" },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase().split(",")).toEqual(
      expect.arrayContaining(["retry-after", "allow"]),
    );
  });

  it.each(["/apiversion", "/openapi.json"])("answers HEAD %s with the Content-Length GET sends", async (path) => {
    const get = await app.fetch(app.url(path));
    const length = (await get.arrayBuffer()).byteLength;
    expect(get.headers.get("content-length")).toBe(String(length));
    const head = await app.fetch(app.url(path), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"));
    expect(head.headers.get("content-length")).toBe(String(length));
  });

  it("exposes the headers scripts read on every response, errors included", async () => {
    for (const path of ["/healthz", "/nope"]) {
      const res = await app.fetch(app.url(path), { headers: { origin: "https://app.example" } });
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-expose-headers")?.toLowerCase().split(",")).toEqual(
        expect.arrayContaining(["etag", "content-range", "location", "x-request-id", "repr-digest", "content-digest"]),
      );
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
  });

  it("exposes on a content answer the headers a content answer carries, and no others", async () => {
    // The full list is a 288-byte header line on every answer of the hottest path, naming Location, tus and
    // auth headers a content answer never has (exposing an absent header does nothing).
    const { resourceURI } = await cmsClient(app, "t").create({ resourceName: "a.txt" }, "abcdef");
    const contentExposes = [
      "etag",
      "content-range",
      "content-disposition",
      "accept-ranges",
      "x-request-id",
      "repr-digest",
      "content-digest",
      "link",
      "vary",
    ];
    for (const headers of [{}, { range: "bytes=0-1" }, { "want-content-digest": "sha-256" }] as Record<
      string,
      string
    >[]) {
      const res = await app.fetch(app.url(`/cms/v1.0/getData/${resourceURI}`), {
        headers: { origin: "https://app.example", ...headers },
      });
      expect(res.ok).toBe(true);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-expose-headers")?.toLowerCase().split(",").sort()).toEqual(
        [...contentExposes].sort(),
      );
      for (const [name] of res.headers) {
        const safelisted = [
          "cache-control",
          "content-language",
          "content-length",
          "content-type",
          "expires",
          "last-modified",
          "pragma",
        ];
        if (
          !name.startsWith("access-control-") &&
          !safelisted.includes(name) &&
          !["x-content-type-options", "content-security-policy", "date", "connection", "keep-alive"].includes(name)
        ) {
          expect(contentExposes, `${name} is on a content answer`).toContain(name);
        }
      }
    }
    // A refused content request is the API's problem answer: the full list.
    const missing = await app.fetch(app.url("/cms/v1.0/getData/nope-t/a.txt"));
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("retry-after");
  });

  it("sends a visitor of / to the media library page", async () => {
    const res = await fetch(app.url("/"), { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/library");
  });

  it("answers unknown routes with a 404 problem", async () => {
    const res = await app.fetch(app.url("/nope"));
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({
      code: "NOT_FOUND",
      status: 404,
      instance: "/nope",
      type: "/problems/not-found",
    });
  });

  it("answers a wrong method with 405 and Allow", async () => {
    const res = await app.fetch(app.url("/cms/v1.0/createResource"));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const del = await app.fetch(app.url("/apiversion"), { method: "DELETE" });
    expect(del.status).toBe(405);
    expect(del.headers.get("allow")).toContain("GET");
  });
});

/**
 * A proxy in front of s3rver that counts the requests the service sends its bucket (reads: GET/HEAD;
 * writes: PUT/POST/DELETE) and, while `down`, stops answering (every connection closed unanswered).
 */
async function startCountingProxy(target: string) {
  const upstream = new URL(target);
  const counts = { reads: 0, writes: 0 };
  let down = false;
  const server = createServer((req, res) => {
    if (down) return void req.socket.destroy();
    if (req.method === "GET" || req.method === "HEAD") counts.reads++;
    else counts.writes++;
    forwardTo(upstream, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    setDown(value: boolean) {
      down = value;
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("/readyz on S3: one read per short window, never a write", () => {
  let s3: S3TestServer;
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
  let target: TestApp;
  /** The app's clock: the test moves it past the 2 s window instead of sleeping. */
  const time = fakeClock();
  beforeAll(async () => {
    s3 = await startS3Server();
    proxy = await startCountingProxy(s3.endpoint);
    target = await startTestApp(s3Settings(s3, proxy.endpoint), { clock: time.clock, transport: "in-process" });
  });
  afterAll(async () => {
    await target?.close();
    await proxy?.close();
    await s3?.close();
  });

  it("answers many probes within the window with at most one storage read and no write, then 503 once the store stops answering", async () => {
    // Real I/O first: the collector's start-up sweep lists the bucket; counted only once it is over.
    await target.deps.collectorIdle();
    time.advance(2100); // past any window opened at start-up
    proxy.counts.reads = 0;
    proxy.counts.writes = 0;
    // Several load balancers at once, then one more: all inside the window.
    const logsBefore = target.logs.length;
    const probe = async () => {
      const res = await target.fetch(target.url("/readyz"));
      if (res.status === 200) return 200;
      const { detail } = (await res.json()) as { detail?: string };
      return `${res.status} ${detail}`;
    };
    const answers = await Promise.all(Array.from({ length: 20 }, probe));
    answers.push(await probe());
    // On failure, the answers and what the app logged say which check failed and why.
    const logged = target.logs.slice(logsBefore).filter((line) => line.level === "warn" || line.level === "error");
    expect({ logged, answers: answers.filter((a) => a !== 200) }).toEqual({ logged: [], answers: [] });
    expect(proxy.counts).toEqual({ reads: 1, writes: 0 });

    proxy.setDown(true);
    expect((await target.fetch(target.url("/readyz"))).status).toBe(200); // the window's answer stands
    time.advance(2100);
    expect((await target.fetch(target.url("/readyz"))).status).toBe(503);
    const problem = await (await target.fetch(target.url("/readyz"))).json();
    expect(problem).toMatchObject({ status: 503, code: "UNAVAILABLE" });
    expect(problem.detail).toMatch(/storage/);
    proxy.setDown(false);
    time.advance(2100);
    expect((await target.fetch(target.url("/readyz"))).status).toBe(200);
    expect(proxy.counts.writes).toBe(0);
  });
});

describe("explorer", () => {
  it("serves an OpenAPI 3.1 document generated from the routes", async () => {
    const doc = (await (await app.fetch(app.url("/openapi.json"))).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: {
        schemas: Record<string, { required?: string[]; properties?: Record<string, { description?: string }> }>;
      };
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/apiversion", "/cms/v1.0/createResource", "/cms/v1.0/getData/{context}/{path}"]),
    );
    expect(Object.keys(doc.paths["/cms/v1.0/createResource"]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(["201", "400", "413", "415", "422", "502"]),
    );
    const createRequest = doc.components.schemas.CreateResourceRequest;
    expect(createRequest?.required?.sort()).toEqual(["resourceAuthor", "resourceName", "resourceTenantId"].sort());
    // Optional, and the document says what stands in for it.
    expect(createRequest?.properties?.resourceMediaType?.description).toMatch(/origin's Content-Type/);
  });

  it.each(["/swagger-ui.html", "/docs"])("serves Swagger UI at %s with self-hosted assets only", async (path) => {
    const res = await app.fetch(app.url(path));
    expect(res.status).toBe(200);
    const html = await res.text();
    const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.sort()).toEqual(
      [
        "/explorer.js",
        "/vendor/swagger-ui-dist/favicon-32x32.png",
        "/vendor/swagger-ui-dist/swagger-ui.css",
        "/vendor/swagger-ui-dist/swagger-ui-bundle.js",
      ].sort(),
    );
    for (const asset of assets) {
      const a = await app.fetch(app.url(asset));
      expect(a.status).toBe(200);
      expect((await a.arrayBuffer()).byteLength).toBeGreaterThan(500);
    }
    expect(html).toContain("/openapi.json");
  });

  it.each(["/swagger-ui.html", "/docs"])(
    "sends %s with a CSP: own scripts and Swagger UI's one hashed inline script, never framed",
    async (path) => {
      const res = await app.fetch(app.url(path));
      const csp = (res.headers.get("content-security-policy") ?? "").split(";").map((d) => d.trim());
      expect(csp).toEqual(expect.arrayContaining(["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"]));
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      const html = await res.text();
      // Besides the JSON data block, exactly one inline script (@hono/swagger-ui's start-up code) …
      const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>([\s\S]*?)<\/script>/g)];
      expect(inline.map((m) => m[1])).toEqual([' id="explorer-settings" type="application/json"', ""]);
      expect(inline[1]?.[2]).toContain("SwaggerUIBundle(");
      // … and script-src allows this origin plus that script's SHA-256, nothing else inline.
      const hash = createHash("sha256")
        .update(inline[1]?.[2] ?? "")
        .digest("base64");
      expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`);
    },
  );

  it("sends Swagger UI's bundle gzipped to clients that accept it, with a strong ETag that answers 304", async () => {
    const url = app.url("/vendor/swagger-ui-dist/swagger-ui-bundle.js");
    const plain = await getRaw(url, { "accept-encoding": "identity" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    const gzipped = await getRaw(url, { "accept-encoding": "gzip, deflate, br" });
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.headers.etag).toBe(etag);
    expect(Number(gzipped.headers["content-length"])).toBe(gzipped.body.length);
    // At least 3× smaller on the wire, and the same bytes once inflated.
    expect(gzipped.body.length * 3).toBeLessThan(plain.body.length);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
    expect(createHash("sha256").update(plain.body).digest("hex")).toBe(etag.slice(1, -1));
    const again = await getRaw(url, { "accept-encoding": "gzip", "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    // q=0 refuses an encoding.
    expect(
      (await getRaw(url, { "accept-encoding": "gzip;q=0, identity" })).headers["content-encoding"],
    ).toBeUndefined();
  });

  it("serves only allow-listed vendor files", async () => {
    expect((await app.fetch(app.url("/vendor/swagger-ui-dist/package.json"))).status).toBe(404);
    expect((await app.fetch(app.url("/vendor/swagger-ui-dist/..%2F..%2Fpackage.json"))).status).toBe(404);
  });
});
