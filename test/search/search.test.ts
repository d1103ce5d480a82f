/**
 * searchResources and folders (issue 38) on the real app in-process with a real libSQL file: full
 * text (whole words, prefixes, phrases, case and accents folded, FTS5 syntax inert), the filters,
 * sorts and keyset pages, deleted resources never found, and every bad parameter a 400 naming it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("find", {}, { transport: "in-process" });

type Page = { items: (ResourceDto & { title: string | null })[]; nextCursor: string | null };
const search = async (query: string): Promise<Page> => {
  const res = await t.cms.get(`searchResources?tenant=find&${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
};
const names = async (query: string) => (await search(query)).items.map((r) => r.title);

beforeAll(async () => {
  const make = (title: string, fields: Record<string, unknown> = {}, name = "file.txt") =>
    t.cms.create({ resourceName: name, title, ...fields });
  await make("Sunset over the harbour", { tags: ["Sea", "evening"], folder: "/photos/2026/" }, "sunset.png");
  await make("Sunrise", { description: "A café at dawn", tags: ["sea"], folder: "/photos/" });
  await make("Quarterly report", { altText: "bar chart", folder: "/docs/" }, "report.pdf");
  await make("Sun", { tags: ["Sun-Day"], folder: "/photos/2025/" });
  await make("Sun AND OR NOT (x) name:y ^z", { folder: "/misc/" });
  const gone = await make("Sunset deleted");
  const lock = await t.cms.lock(gone.resourceUID);
  await t.cms.post("deleteResource", { resourceUID: gone.resourceUID, author: "Author", lockID: lock.lockID });
  // Another tenant's resource matching everything: never found here.
  await t.cms.create({ resourceTenantId: "other", title: "Sunset sun sunrise", tags: ["sea"], folder: "/photos/" });
});

describe("searchResources", () => {
  it("matches whole words only; a trailing * is a prefix", async () => {
    expect(await names("q=sun")).toEqual(expect.arrayContaining(["Sun", "Sun AND OR NOT (x) name:y ^z"]));
    expect(await names("q=sun")).not.toContain("Sunset over the harbour");
    expect((await names("q=sun*")).sort()).toEqual(
      ["Sun", "Sun AND OR NOT (x) name:y ^z", "Sunrise", "Sunset over the harbour"].sort(),
    );
  });

  it("folds case and accents, ANDs words, keeps phrases, searches name, description, alt text and tags", async () => {
    expect(await names("q=CAFE")).toEqual(["Sunrise"]);
    expect(await names("q=sunset%20harbour")).toEqual(["Sunset over the harbour"]);
    expect(await names("q=sunset%20report")).toEqual([]);
    expect(await names(`q=${encodeURIComponent('"over the harbour"')}`)).toEqual(["Sunset over the harbour"]);
    expect(await names(`q=${encodeURIComponent('"the over harbour"')}`)).toEqual([]);
    expect(await names("q=report.pdf")).toEqual(["Quarterly report"]);
    expect(await names("q=chart")).toEqual(["Quarterly report"]);
    expect(await names("q=evening")).toEqual(["Sunset over the harbour"]);
  });

  it("treats FTS5 syntax in q as text", async () => {
    for (const q of ["AND", "OR NOT", "(x)", "name:y", "^z", "NEAR(a b)", '"', "sun*)", "title:*", "-sun"]) {
      const res = await t.cms.get(`searchResources?tenant=find&q=${encodeURIComponent(q)}`);
      expect([200, 400], q).toContain(res.status);
    }
    expect(await names(`q=${encodeURIComponent("name:y")}`)).toEqual(["Sun AND OR NOT (x) name:y ^z"]);
    expect(await names("q=NOT")).toEqual(["Sun AND OR NOT (x) name:y ^z"]);
  });

  it("filters by tags (all, case-insensitive), folder, recursive folder and media type", async () => {
    expect((await names("tag=SEA")).sort()).toEqual(["Sunrise", "Sunset over the harbour"]);
    expect(await names("tag=sea&tag=Evening")).toEqual(["Sunset over the harbour"]);
    expect(await names("tag=sun-day")).toEqual(["Sun"]);
    expect(await names("tag=sun")).toEqual([]);
    expect(await names(`folder=${encodeURIComponent("/photos/")}`)).toEqual(["Sunrise"]);
    expect((await names(`folder=${encodeURIComponent("/photos/")}&recursive=true`)).sort()).toEqual(
      ["Sun", "Sunrise", "Sunset over the harbour"].sort(),
    );
    expect(await names("mediaType=text/*&q=chart")).toEqual(["Quarterly report"]);
    expect(await names("mediaType=image/png&q=chart")).toEqual([]);
  });

  it("never finds deleted resources nor another tenant's", async () => {
    expect(await names("q=deleted")).toEqual([]);
    expect((await names("q=sunset")).every((n) => n !== "Sunset deleted")).toBe(true);
    expect((await search("q=sunset")).items.every((r) => r.resourceUID.endsWith("-find"))).toBe(true);
  });

  it("pages with a keyset cursor in every sort, without repeats or gaps", async () => {
    for (const sort of ["createdAt", "-createdAt", "name"]) {
      const all = (await search(`sort=${sort}&limit=100`)).items.map((r) => r.resourceUID);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await search(`sort=${sort}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        paged.push(...page.items.map((r) => r.resourceUID));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged, sort).toEqual(all);
      expect(all).toHaveLength(5);
    }
    const first = await search("q=sun*&limit=1");
    const second = await search(`q=sun*&limit=3&cursor=${first.nextCursor}`);
    const all = await search("q=sun*&limit=10");
    expect([...first.items, ...second.items].map((r) => r.resourceUID)).toEqual(all.items.map((r) => r.resourceUID));
  });

  it("ranks by relevance, equal ranks in the order added, and pages by rank with or without other filters", async () => {
    // Three resources of the same text rank equal: in the order they were added, on every page.
    const twins = [];
    for (const folder of ["/t/", "/t/", "/u/"])
      twins.push((await t.cms.create({ resourceTenantId: "twins", title: "Twin lake", folder })).resourceUID);
    await t.cms.create({ resourceTenantId: "twins", title: "Twin lake twin peaks, a much longer title" });
    const twinSearch = async (query: string) => {
      const res = await t.cms.get(`searchResources?tenant=twins&${query}`);
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as Page;
    };
    const pagedUids = async (query: string) => {
      const uids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await twinSearch(`${query}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
        uids.push(...page.items.map((r) => r.resourceUID));
        cursor = page.nextCursor;
      } while (cursor);
      return uids;
    };
    const all = (await twinSearch("q=lake&limit=100")).items.map((r) => r.resourceUID);
    expect(all.slice(0, 3)).toEqual(twins);
    expect(await pagedUids("q=lake")).toEqual(all);
    expect(await pagedUids("q=la*")).toEqual(all);
    // With a filter the rows are ranked after the join: the same order, the same pages.
    expect(await pagedUids(`q=lake&folder=${encodeURIComponent("/t/")}`)).toEqual([twins[0], twins[1]]);
    // The more relevant first: the whole short title before the long one (bm25: fewer tokens).
    expect((await names("q=sun")).at(0)).toBe("Sun");
  });

  it("finds nothing for a tenant that never had resources", async () => {
    expect((await t.cms.get("searchResources?tenant=nobody-here&q=sun*")).status).toBe(200);
    expect(await (await t.cms.get("searchResources?tenant=nobody-here&q=sun*")).json()).toEqual({
      items: [],
      nextCursor: null,
    });
  });

  it.each([
    ["tenant", ""],
    ["q", ""],
    ["q", "!!!"],
    ["q", "s*"],
    ["q", "x".repeat(201)],
    ["q", Array.from({ length: 9 }, (_, i) => `w${i}`).join(" ")],
    ["mediaType", "notatype"],
    ["recursive", "maybe"],
    ["createdAfter", "yesterday"],
    ["createdBefore", "2026-13-01T00:00:00Z"],
    ["sort", "size"],
    ["limit", "0"],
    ["limit", "101"],
    ["cursor", "garbage"],
    ["folder", "nope"],
  ])("400 naming /query/%s for a malformed value", async (name, value) => {
    const base = name === "tenant" ? "" : "tenant=find&";
    const extra = name === "recursive" ? "&folder=/photos/" : "";
    const res = await t.cms.get(`searchResources?${base}${name}=${encodeURIComponent(value)}${extra}`);
    await expectProblem(res, 400, "VALIDATION_FAILED", `/query/${name}`);
  });

  it("400 for relevance without q, and a cursor of another sort", async () => {
    await expectProblem(
      await t.cms.get("searchResources?tenant=find&sort=relevance"),
      400,
      "VALIDATION_FAILED",
      "/query/sort",
    );
    const page = await search("sort=name&limit=1");
    await expectProblem(
      await t.cms.get(`searchResources?tenant=find&sort=createdAt&cursor=${page.nextCursor}`),
      400,
      "VALIDATION_FAILED",
      "/query/cursor",
    );
  });
});

describe("folders", () => {
  it("lists the direct subfolders holding live resources, with counts", async () => {
    const res = await t.cms.get(`${API}/folders?tenant=find`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      folders: [
        { path: "/docs/", resources: 1, folders: 0 },
        { path: "/misc/", resources: 1, folders: 0 },
        { path: "/photos/", resources: 1, folders: 2 },
      ],
    });
    const photos = await t.cms.get(`${API}/folders?tenant=find&parent=/photos/`);
    expect(await photos.json()).toEqual({
      folders: [
        { path: "/photos/2025/", resources: 1, folders: 0 },
        { path: "/photos/2026/", resources: 1, folders: 0 },
      ],
    });
    await expectProblem(
      await t.cms.get(`${API}/folders?tenant=find&parent=x`),
      400,
      "VALIDATION_FAILED",
      "/query/parent",
    );
  });
});
