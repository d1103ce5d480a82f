/**
 * Issue 28 §4 inside workerd: caches.default answers public versioned URLs with no D1 query and no
 * R2 read (the bindings are wrapped to count them), and an update evicts the colo's mutable copy.
 * Auth is off (wrangler.toml), so reads are public.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";

const API = "http://edge.test/cms/v1.0";
beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

/** `target` with every method call counted in `counts[label]`. */
function counting<T extends object>(target: T, label: string, counts: Record<string, number>): T {
  return new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        counts[label] = (counts[label] ?? 0) + 1;
        return value.apply(t, args);
      };
    },
  });
}

/**
 * The Worker's fetch with a context whose waitUntil work (cache puts, evictions) is awaited before
 * each answer is returned, so the next request sees it; `post` sends a JSON body to an API verb.
 */
function caller(app: ReturnType<typeof createWorkerApp>, bindings: typeof env) {
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => void pending.push(p), passThroughOnException() {} };
  const call = async (request: Request) => {
    const res = await app.fetch(request, bindings, ctx);
    await Promise.all(pending.splice(0));
    return res;
  };
  const post = (verb: string, body: unknown) =>
    call(
      new Request(`${API}/${verb}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  return { call, post };
}

describe("the Workers Cache API in front of the app", () => {
  it("answers a public versioned URL from the colo's cache: no D1 query, no R2 read, Range and 304 too", async () => {
    const counts: Record<string, number> = {};
    const bindings = { ...env, DB: counting(env.DB, "d1", counts), BLOBS: counting(env.BLOBS, "r2", counts) };
    const app = createWorkerApp();
    const { call } = caller(app, bindings);
    const created = await call(
      new Request(`${API}/createResource`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          resourceAuthor: "a",
          resourceBinary: btoa("edge bytes"),
          resourceMediaType: "text/plain",
          resourceName: "e.txt",
          resourceTenantId: "edge",
        }),
      }),
    );
    expect(created.status).toBe(201);
    const { versionedURI } = (await created.json()) as { versionedURI: string };
    const url = `${API}/getData/${versionedURI}`;

    const miss = await call(new Request(url));
    expect(miss.status).toBe(200);
    expect(await miss.text()).toBe("edge bytes");
    expect(miss.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");

    for (const key of Object.keys(counts)) counts[key] = 0;
    const hit = await call(new Request(url));
    expect(hit.status).toBe(200);
    expect(await hit.text()).toBe("edge bytes");
    expect(counts.d1 ?? 0).toBe(0);
    expect(counts.r2 ?? 0).toBe(0);

    // Ranges and revalidations on a hit, as on a miss.
    const range = await call(new Request(url, { headers: { range: "bytes=0-3" } }));
    expect(range.status).toBe(206);
    expect(await range.text()).toBe("edge");
    const etag = hit.headers.get("etag") as string;
    const again = await call(new Request(url, { headers: { "if-none-match": etag } }));
    expect(again.status).toBe(304);
    expect(counts.d1 ?? 0).toBe(0);
    expect(counts.r2 ?? 0).toBe(0);
  });

  it("answers a revision (getRevisionData) and a kept mutable URL from the colo's cache: no D1 query, no R2 read", async () => {
    const counts: Record<string, number> = {};
    const bindings = {
      ...env,
      CMS_CACHE_MAX_AGE: "60",
      DB: counting(env.DB, "d1", counts),
      BLOBS: counting(env.BLOBS, "r2", counts),
    };
    const { call, post } = caller(createWorkerApp(), bindings);
    const created = (await (
      await post("createResource", {
        resourceAuthor: "a",
        resourceBinary: btoa("revision bytes"),
        resourceMediaType: "text/plain",
        resourceName: "r.txt",
        resourceTenantId: "edge",
      })
    ).json()) as { resourceUID: string; resourceURI: string };
    const urls = [`${API}/getRevisionData/${created.resourceUID}/1`, `${API}/getData/${created.resourceURI}`];
    for (const url of urls) expect(await (await call(new Request(url))).text()).toBe("revision bytes");
    for (const key of Object.keys(counts)) counts[key] = 0;
    for (const url of urls) {
      const hit = await call(new Request(url));
      expect(await hit.text(), url).toBe("revision bytes");
      const ranged = await call(new Request(url, { headers: { range: "bytes=0-7" } }));
      expect([ranged.status, await ranged.text()], url).toEqual([206, "revision"]);
      const revalidated = await call(new Request(url, { headers: { "if-none-match": hit.headers.get("etag") ?? "" } }));
      expect(revalidated.status, url).toBe(304);
    }
    expect(counts.d1 ?? 0).toBe(0);
    expect(counts.r2 ?? 0).toBe(0);
  });

  it("keeps a mutable URL within CMS_CACHE_MAX_AGE, and an update evicts the colo's copy", async () => {
    const counts: Record<string, number> = {};
    const bindings = { ...env, CMS_CACHE_MAX_AGE: "60", DB: counting(env.DB, "d1", counts) };
    const app = createWorkerApp();
    const { call, post } = caller(app, bindings);
    const created = await post("createResource", {
      resourceAuthor: "a",
      resourceBinary: btoa("first"),
      resourceMediaType: "text/plain",
      resourceName: "m.txt",
      resourceTenantId: "edge",
    });
    const { resourceURI, resourceUID } = (await created.json()) as { resourceURI: string; resourceUID: string };
    const url = `${API}/getData/${resourceURI}`;
    expect(await (await call(new Request(url))).text()).toBe("first");
    counts.d1 = 0;
    const hit = await call(new Request(url));
    expect(hit.headers.get("cache-control")).toBe("public, max-age=60");
    expect(await hit.text()).toBe("first");
    expect(counts.d1).toBe(0);

    const lock = (await (await post("lockResourceDTO", { resourceUID, author: "a" })).json()) as Record<
      string,
      unknown
    >;
    const updated = await post("updateResource", { ...lock, resourceBinary: btoa("second") });
    expect(updated.status).toBe(200);
    expect(await (await call(new Request(url))).text()).toBe("second");
  });
});

describe("delete and purge evict every URL the colo holds for the resource", () => {
  /** A resource with two contents, each of its URLs read once through the cache (CMS_CACHE_MAX_AGE=60). */
  async function cachedResource(app: ReturnType<typeof createWorkerApp>, bindings: typeof env, name: string) {
    const { call, post } = caller(app, bindings);
    const created = (await (
      await post("createResource", {
        resourceAuthor: "a",
        resourceBinary: btoa("one"),
        resourceMediaType: "text/plain",
        resourceName: name,
        resourceTenantId: "edge",
      })
    ).json()) as { resourceURI: string; resourceUID: string; versionedURI: string };
    const lock = (await (
      await post("lockResourceDTO", { resourceUID: created.resourceUID, author: "a" })
    ).json()) as Record<string, unknown>;
    const updated = (await (await post("updateResource", { ...lock, resourceBinary: btoa("two") })).json()) as {
      versionedURI: string;
    };
    const urls = [
      `${API}/getData/${created.resourceURI}`,
      `${API}/getData/${created.versionedURI}`,
      `${API}/getData/${updated.versionedURI}`,
      `${API}/getRevisionData/${created.resourceUID}/1`,
      `${API}/getDataUuid/${created.resourceUID}`,
    ];
    for (const url of urls) expect((await call(new Request(url))).status, url).toBe(200);
    // The update kept the lock: delete needs it.
    return { created, urls, call, post, lock };
  }

  it("deleteResource: the mutable, versioned and revision URLs answer 404 at once, not the cached copies", async () => {
    const bindings = { ...env, CMS_CACHE_MAX_AGE: "60" };
    const app = createWorkerApp();
    const { urls, call, post, lock } = await cachedResource(app, bindings, "deleted.txt");
    const deleted = await post("deleteResource", { resourceUID: lock.resourceUID, author: "a", lockID: lock.lockID });
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    for (const url of urls) expect((await call(new Request(url))).status, url).toBe(404);
  });

  it("purgeResource: the URLs found before the purge are evicted; each answers 404", async () => {
    const bindings = { ...env, CMS_CACHE_MAX_AGE: "60" };
    const app = createWorkerApp();
    const { created, urls, call, post } = await cachedResource(app, bindings, "purged.txt");
    const purged = await post("purgeResource", { resourceUID: created.resourceUID });
    expect(purged.status).toBe(200);
    expect(((await purged.json()) as { purged: string[] }).purged).toEqual([created.resourceUID]);
    for (const url of urls) expect((await call(new Request(url))).status, url).toBe(404);
  });
});

describe("image derivatives are never kept in the colo's cache", () => {
  // A 60×40 PNG (one colour), made with sharp.
  const PNG =
    "iVBORw0KGgoAAAANSUhEUgAAADwAAAAoCAIAAAAt2Q6oAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAPElEQVR42u3OQQkAAAgEsAthHPtjLFP4EAYLsEzXO5GWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlr5ML1eaQZcnBE1IAAAAAElFTkSuQmCC";

  it("format=auto answers each Accept with its own format, and a deleted resource's derivative is 404 at once", async () => {
    const counts: Record<string, number> = {};
    const bindings = { ...env, CMS_CACHE_MAX_AGE: "60", DB: counting(env.DB, "d1", counts) };
    const app = createWorkerApp();
    const { call, post } = caller(app, bindings);
    const created = (await (
      await post("createResource", {
        resourceAuthor: "a",
        resourceBinary: PNG,
        resourceMediaType: "image/png",
        resourceName: "p.png",
        resourceTenantId: "edge",
      })
    ).json()) as { resourceUID: string; versionedURI: string; resourceURI: string };
    // Public and immutable (a versioned URL), as a derivative of it is: the policy alone would let it be kept.
    const url = `${API}/getData/${created.versionedURI}&width=20`;
    const avif = await call(new Request(url, { headers: { accept: "image/avif,image/webp,*/*" } }));
    expect(avif.status).toBe(200);
    expect(avif.headers.get("content-type")).toBe("image/avif");
    expect(avif.headers.get("cache-control")).toContain("immutable");
    expect(avif.headers.get("vary")).toMatch(/accept/i);
    // The Cache API keys by URL alone: a kept AVIF would reach a client that cannot show it.
    const webp = await call(new Request(url, { headers: { accept: "image/webp,*/*" } }));
    expect(webp.headers.get("content-type")).toBe("image/webp");
    const png = await call(new Request(url, { headers: { accept: "*/*" } }));
    expect(png.headers.get("content-type")).toBe("image/png");

    const fixed = `${API}/getData/${created.resourceURI}?width=20&format=png`;
    expect((await call(new Request(fixed))).status).toBe(200);
    counts.d1 = 0;
    expect((await call(new Request(fixed))).status).toBe(200);
    expect(counts.d1).toBeGreaterThan(0); // answered by the app, not by the colo's cache

    // Its URLs cannot all be named to evict them on delete: not kept, nothing outlives the resource.
    const lock = (await (
      await post("lockResourceDTO", { resourceUID: created.resourceUID, author: "a" })
    ).json()) as Record<string, unknown>;
    const deleted = await post("deleteResource", {
      resourceUID: created.resourceUID,
      author: "a",
      lockID: lock.lockID,
    });
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    for (const gone of [url, fixed]) expect((await call(new Request(gone))).status, gone).toBe(404);
  });
});
