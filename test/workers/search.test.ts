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
});
