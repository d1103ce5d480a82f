/**
 * Issue 28 §3: the service behind a stock nginx proxy_cache (test/helpers/nginx-cache.ts: it
 * honours the origin's headers, nothing overridden), all on 127.0.0.1. The figures (offload,
 * origin requests) are printed for the closing note.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, base64, cmsClient, type ResourceDto } from "../helpers/cms-client.js";
import { type NginxCache, startNginxCache } from "../helpers/nginx-cache.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

type Versioned = ResourceDto & { versionedURI: string };
const KiB = 1024;

/** `count` GETs of `url`, `concurrency` at a time; each body must equal `expected`. */
async function hammer(url: string, count: number, concurrency: number, expected: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(expected);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function update(app: TestApp, uid: string, text: string): Promise<void> {
  const cms = cmsClient(app, "edge");
  const lock = await cms.lock(uid, "Editor");
  const res = await cms.post("updateResource", { ...lock, resourceAuthor: "Editor", resourceBinary: base64(text) });
  expect(res.status, await res.clone().text()).toBe(200);
  await cms.post("unlockResourceDTO", { resourceUID: uid, author: "Editor", lockID: lock.lockID });
}

describe("behind nginx proxy_cache, default headers", () => {
  let app: TestApp;
  let nginx: NginxCache;
  beforeAll(async () => {
    app = await startTestApp();
    nginx = await startNginxCache(app.baseUrl);
  });
  afterAll(async () => {
    await nginx?.close();
    await app?.close();
  });

  // 500, not the 2 000 of issue 28's figure: the 499 hits after the one miss show the same (a hit
  // never reaches the origin), at a quarter of the requests through two servers.
  it("500 GETs of a public versioned URL reach the origin once", async () => {
    const text = "v".repeat(4 * KiB);
    const created = (await cmsClient(app, "edge").create({ resourceName: "four.txt" }, text)) as Versioned;
    const path = `${API}/getData/${created.versionedURI}`;
    await hammer(nginx.url(path), 1, 1, text); // the one miss
    await hammer(nginx.url(path), 499, 20, text);
    const origin = await nginx.originRequests(path);
    console.log(
      `[issue 28] versioned URL: 500 GETs, ${origin} at the origin, offload ${(100 * (1 - origin / 500)).toFixed(2)} %`,
    );
    expect(origin).toBe(1);
  }, 120_000); // 500 requests through two servers on a shared, loaded CI machine

  it("200 GETs of a public mutable URL all reach the origin (no-cache), and an update shows at once", async () => {
    const created = (await cmsClient(app, "edge").create({ resourceName: "mutable.txt" }, "before")) as Versioned;
    const path = `${API}/getData/${created.resourceURI}`;
    await hammer(nginx.url(path), 200, 10, "before");
    expect(await nginx.originRequests(path)).toBe(200);
    await update(app, created.resourceUID, "after!");
    const res = await fetch(nginx.url(path));
    expect(await res.text()).toBe("after!");
  });

  it("a Range of a cached versioned URL is 206 with exactly those bytes; a browser's revalidation 304", async () => {
    const bytes = new Uint8Array(256 * KiB).map((_, i) => (i * 7) & 0xff);
    const created = (await cmsClient(app, "edge").create(
      { resourceName: "big.bin", resourceMediaType: "application/octet-stream" },
      bytes,
    )) as Versioned;
    const path = `${API}/getData/${created.versionedURI}`;
    const first = await fetch(nginx.url(path));
    expect(new Uint8Array(await first.arrayBuffer())).toEqual(bytes); // now cached, whole
    const range = await fetch(nginx.url(path), { headers: { range: "bytes=65536-131071" } });
    expect(range.status).toBe(206);
    expect(range.headers.get("content-range")).toBe(`bytes 65536-131071/${bytes.length}`);
    expect(new Uint8Array(await range.arrayBuffer())).toEqual(bytes.slice(65536, 131072));
    const again = await fetch(nginx.url(path), { headers: { "if-none-match": `"${created.sha256}"` } });
    expect(again.status).toBe(304);
    expect(await nginx.originRequests(path)).toBe(1);
  });
});

describe("behind nginx proxy_cache, CMS_CACHE_MAX_AGE=2 and CMS_CACHE_STALE_WHILE_REVALIDATE=1", () => {
  let app: TestApp;
  let nginx: NginxCache;
  beforeAll(async () => {
    app = await startTestApp({ CMS_CACHE_MAX_AGE: "2", CMS_CACHE_STALE_WHILE_REVALIDATE: "1" });
    nginx = await startNginxCache(app.baseUrl);
  });
  afterAll(async () => {
    await nginx?.close();
    await app?.close();
  });

  it("the origin sees about one request per 2 s; an update shows within max-age + the stale window", async () => {
    const created = (await cmsClient(app, "edge").create({ resourceName: "tuned.txt" }, "one")) as Versioned;
    const path = `${API}/getData/${created.resourceURI}`;
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < 5000) {
      await hammer(nginx.url(path), 10, 5, "one");
      sent += 10;
    }
    const origin = await nginx.originRequests(path);
    console.log(`[issue 28] mutable URL, max-age=2: ${sent} GETs in 5 s, ${origin} at the origin`);
    // About one per max-age (≈ 3 in 5 s); without proxy_cache_lock a request or two racing each
    // expiry may also go through. 430-odd GETs reaching the origin would be hundreds.
    expect(origin).toBeGreaterThanOrEqual(2);
    expect(origin).toBeLessThanOrEqual(10);

    await update(app, created.resourceUID, "two");
    const updated = Date.now();
    let seen = "";
    while (seen !== "two" && Date.now() - updated < 6000) {
      seen = await (await fetch(nginx.url(path))).text();
      if (seen !== "two") await new Promise((r) => setTimeout(r, 100));
    }
    const stale = Date.now() - updated;
    console.log(`[issue 28] mutable URL, max-age=2 swr=1: the update showed after ${stale} ms`);
    expect(seen).toBe("two");
    expect(stale).toBeLessThanOrEqual(3000 + 1000); // max-age + stale-while-revalidate, plus scheduling slack
  });
});

describe("behind nginx proxy_cache, auth on", () => {
  let stack: AuthStack;
  let nginx: NginxCache;
  beforeAll(async () => {
    stack = await startAuthStack();
    nginx = await startNginxCache(stack.app.baseUrl);
  });
  afterAll(async () => {
    await nginx?.close();
    await stack?.close();
  });

  it("authenticated content without a token is 401 through the cache, never a cached copy", async () => {
    const token = await stack.passwordToken("acme-creator");
    const cms = cmsClient(stack.app, "acme", token);
    const created = (await cms.create({ resourceName: "secret.txt" }, "secret")) as Versioned;
    for (const uri of [created.resourceURI, created.versionedURI]) {
      const path = `${API}/getData/${uri}`;
      const authed = await fetch(nginx.url(path), { headers: bearer(token) });
      expect(authed.status).toBe(200);
      expect(authed.headers.get("cache-control")).toMatch(/^private, /);
      expect(await authed.text()).toBe("secret");
      const anonymous = await fetch(nginx.url(path));
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get("content-type")).toBe("application/problem+json");
      expect(await nginx.originRequests(path)).toBe(2);
    }
  });
});
