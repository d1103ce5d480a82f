/**
 * Issue 38: the descriptive fields on every way in (createResource JSON, uploadResource multipart
 * fields, tus Upload-Metadata) and in every answer carrying a resource; each limit refused with a
 * 400 naming the field, and nothing stored.
 */
import { describe, expect, it } from "vitest";
import { API, expectProblem, form, type ResourceDto, tableCounts, upload, useCmsApp } from "../helpers/cms-client.js";
import { UNSET_DESCRIPTION } from "../helpers/descriptions.js";

const t = useCmsApp("describe", {}, { transport: "in-process" });

type Described = ResourceDto & {
  title: string | null;
  description: string | null;
  altText: string | null;
  tags: string[];
  folder: string;
  metadata: Record<string, unknown>;
  metadataVersion: string;
};

const DESCRIPTION = {
  title: "Harbour at dawn",
  description: "Boats in the harbour.\nEarly morning.",
  altText: "Three fishing boats by a pier",
  tags: ["Boats", "sea"],
  folder: "/photos/2026/",
  metadata: { camera: "X100", rating: 4 },
};

describe("describing resources at creation", () => {
  it("createResource takes the fields, and answers list, query and create carry them", async () => {
    const created = (await t.cms.create(DESCRIPTION)) as Described;
    expect(created).toMatchObject({ ...DESCRIPTION, metadataVersion: expect.any(String) });
    const queried = await t.cms.post("queryResource", { queryUID: created.resourceUID });
    expect(await queried.json()).toMatchObject(DESCRIPTION);
    const listed = await t.cms.get("listResources?tenant=describe");
    const page = (await listed.json()) as { resources: Described[] };
    expect(page.resources.find((r) => r.resourceUID === created.resourceUID)).toMatchObject(DESCRIPTION);
  });

  it("answers the empty values when none are given", async () => {
    const created = (await t.cms.create({ title: null })) as Described;
    expect(created).toMatchObject(UNSET_DESCRIPTION);
  });

  it.each([
    ["title", "x".repeat(201)],
    ["title", "bell\u0007"],
    ["description", "x".repeat(2001)],
    ["altText", "x".repeat(1001)],
    ["tags", Array.from({ length: 33 }, (_, i) => `t${i}`)],
    ["tags", ["a", "A"]],
    ["tags", [""]],
    ["tags", ["x".repeat(65)]],
    ["tags", ["new\nline"]],
    ["folder", "photos/"],
    ["folder", "/photos"],
    ["folder", "/a//b/"],
    ["folder", "/a/../b/"],
    ["folder", "/./"],
    ["folder", `/${"x".repeat(255)}/`],
    ["metadata", [1, 2]],
    ["metadata", "text"],
    ["metadata", { big: "x".repeat(16 * 1024) }],
  ])("refuses a bad %s with a 400 naming it, and stores nothing", async (field, value) => {
    const before = await tableCounts(t.app);
    const res = await t.cms.postCreate({ [field]: value });
    const problem = await expectProblem(res, 400, "VALIDATION_FAILED");
    // The field itself, or (tags) the offending element of it.
    const named = (pointer: string) => pointer === `/json/${field}` || pointer.startsWith(`/json/${field}/`);
    expect(
      problem.errors?.some((e) => named(e.pointer)),
      JSON.stringify(problem.errors),
    ).toBe(true);
    expect(await tableCounts(t.app)).toEqual(before);
  });

  it("counts characters, not UTF-16 units: 200 emoji are a valid title", async () => {
    const created = (await t.cms.create({ title: "😀".repeat(200) })) as Described;
    expect(created.title).toBe("😀".repeat(200));
  });

  it("uploadResource takes them as fields: tags repeated or as one JSON array, metadata as JSON text", async () => {
    const fields = { resourceAuthor: "U", resourceTenantId: "describe", resourceName: "u.txt" };
    const data = form({ ...fields, title: "Uploaded", altText: "alt", folder: "/up/" });
    data.append("tags", "one");
    data.append("tags", "two");
    data.append("metadata", JSON.stringify({ k: "v" }));
    data.append("file", new Blob(["hi"], { type: "text/plain" }), "u.txt");
    const res = await upload(t.app, data);
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await res.json()).toMatchObject({
      title: "Uploaded",
      altText: "alt",
      folder: "/up/",
      tags: ["one", "two"],
      metadata: { k: "v" },
    });
    const asJson = await upload(
      t.app,
      form({ ...fields, tags: '["x y", "z"]' }, { bytes: new TextEncoder().encode("hi"), name: "u.txt" }),
    );
    expect(asJson.status).toBe(201);
    expect(((await asJson.json()) as Described).tags).toEqual(["x y", "z"]);
  });

  it("uploadResource refuses a bad field before storing anything", async () => {
    const before = await tableCounts(t.app);
    const fields = { resourceAuthor: "U", resourceTenantId: "describe", resourceName: "u.txt" };
    for (const [field, value] of [
      ["metadata", "{not json"],
      ["folder", "no-slash"],
      ["tags", '["a", "a"]'],
    ] as const) {
      const res = await upload(t.app, form({ ...fields, [field]: value }, { bytes: new TextEncoder().encode("hi") }));
      await expectProblem(res, 400, "VALIDATION_FAILED", `/body/${field}`);
    }
    expect(await tableCounts(t.app)).toEqual(before);
  });

  it("tus takes them as Upload-Metadata keys and the finished upload carries them", async () => {
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const meta = {
      resourceTenantId: "describe",
      filename: "t.txt",
      author: "T",
      title: "Via tus",
      folder: "/tus/",
      tags: JSON.stringify(["résumé"]),
      metadata: JSON.stringify({ source: "tus" }),
    };
    const headerOf = (fields: Record<string, string>) =>
      Object.entries(fields)
        .map(([k, v]) => `${k} ${b64(v)}`)
        .join(",");
    const header = headerOf(meta);
    const res = await t.app.fetch(t.app.url(`${API}/uploads`), {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "2",
        "upload-metadata": header,
        "content-type": "application/offset+octet-stream",
      },
      body: "hi",
    });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(await res.json()).toMatchObject({
      title: "Via tus",
      folder: "/tus/",
      tags: ["résumé"],
      metadata: { source: "tus" },
    });
    const bad = await t.app.fetch(t.app.url(`${API}/uploads`), {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "2",
        "upload-metadata": headerOf({ ...meta, folder: "x" }),
      },
    });
    const problem = await expectProblem(bad, 400, "VALIDATION_FAILED");
    expect(problem.errors?.[0]?.pointer).toMatch(/folder$/);
  });
});
