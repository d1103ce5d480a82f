/**
 * Issue 38 on Workers: the same migrations on D1 (FTS5 and its triggers), the descriptive fields on
 * create, updateResourceMetadata with If-Match and its webhook outbox row, searchResources (whole
 * words, prefixes, accents, tags, folders, deleted never found) and folders, inside workerd.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";

const API = "http://search.test/cms/v1.0";
beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

type Described = { resourceUID: string; title: string | null; tags: string[]; folder: string; metadataVersion: string };

describe("describe and find on D1", () => {
  it("creates, describes, searches and lists folders", async () => {
    const app = createWorkerApp();
    const call = (path: string, init?: RequestInit) => app.fetch(new Request(`${API}/${path}`, init), env);
    const post = (verb: string, body: unknown, headers: Record<string, string> = {}) =>
      call(verb, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    const create = async (title: string, extra: Record<string, unknown> = {}) => {
      const res = await post("createResource", {
        resourceAuthor: "w",
        resourceBinary: btoa("x"),
        resourceMediaType: "text/plain",
        resourceName: "w.txt",
        resourceTenantId: "wk",
        title,
        ...extra,
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Described;
    };
    const titles = async (query: string) => {
      const res = await call(`searchResources?tenant=wk&${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as { items: Described[] }).items.map((r) => r.title).sort();
    };

    const sunset = await create("Sunset at the Café", { tags: ["Sea"], folder: "/photos/2026/" });
    expect(sunset).toMatchObject({ tags: ["Sea"], folder: "/photos/2026/" });
    await create("Sun", { folder: "/photos/" });
    expect(await titles("q=sun")).toEqual(["Sun"]);
    expect(await titles("q=sun*")).toEqual(["Sun", "Sunset at the Café"]);
    expect(await titles("q=CAFE")).toEqual(["Sunset at the Café"]);
    expect(await titles("tag=sea")).toEqual(["Sunset at the Café"]);
    expect(await titles("folder=/photos/&recursive=true")).toEqual(["Sun", "Sunset at the Café"]);
    expect((await call("searchResources?tenant=wk&recursive=maybe&folder=/x/")).status).toBe(400);

    const updated = await post(
      "updateResourceMetadata",
      { resourceUID: sunset.resourceUID, patch: { title: "Harbour", tags: null } },
      { "if-match": `"${sunset.metadataVersion}"` },
    );
    expect(updated.status, await updated.clone().text()).toBe(200);
    expect(await updated.json()).toMatchObject({ title: "Harbour", tags: [] });
    expect(await titles("q=harbour")).toEqual(["Harbour"]);
    expect(await titles("q=sunset")).toEqual([]);
    const stale = await post(
      "updateResourceMetadata",
      { resourceUID: sunset.resourceUID, patch: { title: "x" } },
      { "if-match": `"${sunset.metadataVersion}"` },
    );
    expect(stale.status).toBe(412);

    const folders = await call("folders?tenant=wk");
    expect(await folders.json()).toEqual({ folders: [{ path: "/photos/", resources: 1, folders: 1 }] });
  });

  it("ranks by relevance on D1: equal ranks in the order added, pages by rank, finds no other tenant's rows", async () => {
    const app = createWorkerApp();
    const call = (path: string) => app.fetch(new Request(`${API}/${path}`), env);
    const create = async (tenant: string, title: string, folder = "/") => {
      const res = await app.fetch(
        new Request(`${API}/createResource`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            resourceAuthor: "w",
            resourceBinary: btoa(title),
            resourceMediaType: "text/plain",
            resourceName: "r.txt",
            resourceTenantId: tenant,
            title,
            folder,
          }),
        }),
        env,
      );
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as Described).resourceUID;
    };
    const twins = [await create("wr", "Twin lake", "/t/"), await create("wr", "Twin lake", "/t/")];
    const long = await create("wr", "Twin lake twin peaks, a much longer title");
    await create("wr-other", "Twin lake");
    const paged = async (query: string) => {
      const uids: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call(`searchResources?tenant=wr&${query}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
        expect(res.status, await res.clone().text()).toBe(200);
        const page = (await res.json()) as { items: Described[]; nextCursor: string | null };
        uids.push(...page.items.map((r) => r.resourceUID));
        cursor = page.nextCursor;
      } while (cursor);
      return uids;
    };
    const ranked = [twins[0], twins[1], long];
    expect(await paged("q=lake")).toEqual(ranked);
    expect(await paged("q=la*")).toEqual(ranked);
    expect(await paged("q=lake&folder=/t/")).toEqual([twins[0], twins[1]]);
    expect(await (await call("searchResources?tenant=never-seen&q=lake")).json()).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it("keeps folder counts exact through create, move, delete and purge, and the full-text key per row", async () => {
    const app = createWorkerApp();
    const post = (verb: string, body: unknown) =>
      app.fetch(
        new Request(`${API}/${verb}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }),
        env,
      );
    const create = async (folder: string) => {
      const res = await post("createResource", {
        resourceAuthor: "w",
        resourceBinary: btoa(folder),
        resourceMediaType: "text/plain",
        resourceName: "c.txt",
        resourceTenantId: "wc",
        folder,
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as Described).resourceUID;
    };
    const exact = async () => {
      const counts = await env.DB.prepare(
        "SELECT tenant_id, folder, resources AS n FROM folder_counts WHERE tenant_id = 'wc' ORDER BY folder",
      ).all();
      const truth = await env.DB.prepare(
        "SELECT tenant_id, folder, count(*) AS n FROM resources WHERE tenant_id = 'wc' AND deleted_at IS NULL AND parent_uid IS NULL GROUP BY tenant_id, folder ORDER BY folder",
      ).all();
      expect(counts.results).toEqual(truth.results);
      return counts.results.map((r: Record<string, unknown>) => [r.folder, r.n]);
    };

    const a = await create("/a/");
    const b = await create("/a/");
    const c = await create("/b/");
    expect(await exact()).toEqual([
      ["/a/", 2],
      ["/b/", 1],
    ]);
    const moved = await post("updateResourceMetadata", { resourceUID: c, patch: { folder: "/a/deep/" } });
    expect(moved.status, await moved.clone().text()).toBe(200);
    const lock = (await (await post("lockResourceDTO", { resourceUID: b, author: "w" })).json()) as { lockID: string };
    const deleted = await post("deleteResource", { resourceUID: b, author: "w", lockID: lock.lockID });
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    expect(await exact()).toEqual([
      ["/a/", 1],
      ["/a/deep/", 1],
    ]);
    // Purged (as the collector does): the counts stay exact, the index drops the rows.
    await env.DB.prepare("DELETE FROM resources WHERE uid IN (?, ?)").bind(a, b).run();
    expect(await exact()).toEqual([["/a/deep/", 1]]);
    const folders = await app.fetch(new Request(`${API}/folders?tenant=wc`), env);
    expect(await folders.json()).toEqual({ folders: [{ path: "/a/", resources: 0, folders: 1 }] });
    // Every row has its own full-text key, and the index agrees with its rows.
    const seqs = await env.DB.prepare("SELECT count(DISTINCT seq) AS keyed, count(*) AS n FROM resources").first();
    expect(seqs?.keyed).toBe(seqs?.n);
    await env.DB.prepare("INSERT INTO resources_fts (resources_fts) VALUES ('integrity-check')").run();
  });
});
