/**
 * The resource lifecycle over HTTP: inline create, update under a lock, revisions, query, list,
 * the anchor's getData variants, soft delete and the admin purge (auth off: everyone is admin).
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import {
  API,
  base64,
  cmsClient,
  expectProblem,
  type ResourceDto,
  utf8,
  volumeFiles,
  useCmsApp,
} from "../helpers/cms-client.js";

const t = useCmsApp("life", {}, { transport: "in-process" });

const text = async (res: Response) => {
  expect(res.status).toBe(200);
  return res.text();
};
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

interface Revision {
  revision: number;
  action: string;
  resourceName: string;
  author: string;
  mediaType: string;
  sha256: string;
  dataURI: string;
}

async function revisionsOf(uid: string): Promise<Revision[]> {
  const res = await t.cms.get(`getRevisions/${uid}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { revisions: Revision[] }).revisions;
}

describe("createResource with resourceBinary", () => {
  it("stores the decoded bytes and serves them with the declared type", async () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    const created = await t.cms.create(
      { resourceMediaType: "application/octet-stream", resourceName: "raw.bin", resourceExternalURI: null },
      bytes,
    );
    expect(created).toMatchObject({ size: 5, mediaType: "application/octet-stream", resourcesList: null });
    expect(created.resourceURI).toBe(`${created.resourceUID}/raw.bin`);
    expect(await t.cms.data(created.resourceURI)).toEqual(bytes);
  });
});

describe("updateResource", () => {
  it("takes resourceAuthor alone, as createResource does: the lock's owner, who becomes the author", async () => {
    const created = await t.cms.create({ resourceName: "note.txt", resourceAuthor: "First" }, "one");
    const { lockID } = await t.cms.lock(created.resourceUID, "Editor");
    const res = await t.cms.post("updateResource", {
      resourceUID: created.resourceUID,
      lockID,
      resourceAuthor: "Editor",
      resourceBinary: base64("two"),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ author: "Editor", lockID });
    expect(await text(await t.cms.get(`getData/${created.resourceURI}`))).toBe("two");
  });

  it("replaces the content under the caller's lock; UID and URI stay; the old content stays reachable", async () => {
    const created = await t.cms.create({ resourceName: "page.txt", resourceAuthor: "First" }, "version one");
    const lock = await t.cms.lock(created.resourceUID, "Editor");
    const res = await t.cms.post("updateResource", {
      ...lock,
      resourceAuthor: "Second",
      resourceBinary: base64("version two!"),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      resourceUID: created.resourceUID,
      author: "Second",
      resourceURI: created.resourceURI,
      versionedURI: `${created.resourceURI}?v=${sha256("version two!").slice(0, 16)}`,
      resourcesList: null,
      lockID: lock.lockID,
      lockExpirationDate: lock.lockExpirationDate,
      resourceName: "page.txt",
    });
    const now = await t.cms.get(`getData/${created.resourceURI}`);
    expect(await text(now)).toBe("version two!");
    expect(now.headers.get("etag")).toBe(`"${sha256("version two!")}"`);

    const revisions = await revisionsOf(created.resourceUID);
    expect(revisions.map((r) => [r.revision, r.action, r.author, r.sha256])).toEqual([
      [1, "create", "First", sha256("version one")],
      [2, "update", "Second", sha256("version two!")],
    ]);
    expect(revisions[0]?.dataURI).toBe(`${API}/getRevisionData/${created.resourceUID}/1`);
    expect(await text(await t.cms.get(revisions[0]?.dataURI as string))).toBe("version one");
    expect(await text(await t.cms.get(revisions[1]?.dataURI as string))).toBe("version two!");
    // The lock stays held, as in the anchor.
    await expectProblem(
      await t.cms.post("lockResourceDTO", { resourceUID: created.resourceUID, author: "Other" }),
      423,
      "LOCKED",
    );
  });

  it("downloads new content from resourceExternalURI", async () => {
    const created = await t.cms.create({}, "old");
    const lock = await t.cms.lock(created.resourceUID);
    const res = await t.cms.post("updateResource", {
      ...lock,
      resourceExternalURI: t.origin.put("update-src", "from the origin"),
    });
    expect(res.status).toBe(200);
    expect(new TextDecoder().decode(await t.cms.data(created.resourceURI))).toBe("from the origin");
  });

  it("changes only metadata when no content is given: name, author and media type", async () => {
    const created = await t.cms.create({ resourceName: "notes.txt" }, "same bytes");
    const lock = await t.cms.lock(created.resourceUID);
    const res = await t.cms.post("updateResource", {
      ...lock,
      resourceName: "renamed.md",
      resourceMediaType: "text/markdown",
      resourceBinary: null,
      resourceExternalURI: null,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { resourceName: string }).resourceName).toBe("renamed.md");
    const served = await t.cms.get(`getData/${created.resourceURI}`); // the URI did not change
    expect(served.headers.get("content-type")).toBe("text/markdown");
    expect(served.headers.get("content-disposition")).toContain('filename="renamed.md"');
    expect(await text(served)).toBe("same bytes");
    const revisions = await revisionsOf(created.resourceUID);
    expect(revisions.map((r) => [r.action, r.resourceName, r.sha256])).toEqual([
      ["create", "notes.txt", sha256("same bytes")],
      ["update", "renamed.md", sha256("same bytes")],
    ]);
  });
  it("detects the media type from the new bytes when the update names none (as the anchor did)", async () => {
    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6,
      0, 0, 0,
    ]);
    const created = await t.cms.create({ resourceName: "picture", resourceMediaType: "image/png" }, png);
    const lock = await t.cms.lock(created.resourceUID);
    const contentType = async () => (await t.cms.get(`getData/${created.resourceURI}`)).headers.get("content-type");
    expect(
      (
        await t.cms.post("updateResource", {
          ...lock,
          resourceBinary: base64("%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<<>>\nendobj\n"),
        })
      ).status,
    ).toBe(200);
    expect(await contentType()).toBe("application/pdf");
    // A type the client names wins over the bytes.
    expect(
      (
        await t.cms.post("updateResource", {
          ...lock,
          resourceMediaType: "application/octet-stream",
          resourceBinary: base64(png),
        })
      ).status,
    ).toBe(200);
    expect(await contentType()).toBe("application/octet-stream");
    // Bytes with no signature (plain text) keep the current type rather than guessing.
    expect((await t.cms.post("updateResource", { ...lock, resourceBinary: base64("just words") })).status).toBe(200);
    expect(await contentType()).toBe("application/octet-stream");
    const revisions = await revisionsOf(created.resourceUID);
    expect(revisions.map((r) => r.mediaType)).toEqual([
      "image/png",
      "application/pdf",
      "application/octet-stream",
      "application/octet-stream",
    ]);
  });
});

describe("deleteResource and purge", () => {
  it("soft-deletes: nothing serves it any more, its history records the delete, the lock is released", async () => {
    const created = await t.cms.create({ resourceName: "gone.txt" }, "soon deleted");
    const lock = await t.cms.lock(created.resourceUID);
    const res = await t.cms.post("deleteResource", lock);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ resourceUID: created.resourceUID, resourceURI: created.resourceURI });

    const uid = created.resourceUID;
    for (const path of [
      `getData/${created.resourceURI}`,
      `getMultiPartData/${created.resourceURI}`,
      `getDataUuid/${uid}`,
      `getRevisionData/${uid}/1`,
    ]) {
      await expectProblem(await t.cms.get(path), 404, "NOT_FOUND");
    }
    await expectProblem(await t.cms.post("getData", { resourceUID: uid }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("queryResource", { queryUID: uid }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("updateResource", { ...lock, resourceAuthor: "x" }), 404, "NOT_FOUND");
    expect((await revisionsOf(uid)).map((r) => r.action)).toEqual(["create", "delete"]);
    await expectProblem(await t.cms.post("queryResourceLock", { uid }), 404, "NOT_FOUND");
  });

  it("purge removes rows for good and deletes blobs nothing references any more", async () => {
    const unique = await t.cms.create({ resourceName: "unique.txt" }, "purge me: unique bytes");
    const shared1 = await t.cms.create({ resourceName: "s1.txt" }, "shared bytes for purge");
    const shared2 = await t.cms.create({ resourceName: "s2.txt" }, "shared bytes for purge");
    const before = await volumeFiles(t.app);

    const purged = await t.cms.post("purgeResource", { resourceUID: unique.resourceUID });
    expect(purged.status).toBe(200);
    expect(await purged.json()).toEqual({ purged: [unique.resourceUID], blobsRemoved: 1 });
    expect((await volumeFiles(t.app)).length).toBe(before.length - 1);

    const lock = await t.cms.lock(shared1.resourceUID);
    expect((await t.cms.post("deleteResource", lock)).status).toBe(200);
    expect(await (await t.cms.post("purgeResource", { resourceUID: shared1.resourceUID })).json()).toEqual({
      purged: [shared1.resourceUID],
      blobsRemoved: 0, // still the content of s2.txt
    });
    expect(await t.cms.data(shared2.resourceURI)).toEqual(utf8("shared bytes for purge"));
    await expectProblem(await t.cms.get(`getRevisions/${shared1.resourceUID}`), 404, "NOT_FOUND");
  });
});

describe("queryResource and listResources", () => {
  it("queryResource answers the ResourceDTO of a UID", async () => {
    const created = await t.cms.create({ resourceName: "q.txt" });
    const res = await t.cms.post("queryResource", { queryUID: created.resourceUID, queryResourceName: null });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  it("lists a tenant's resources with filters, in a stable order, one page at a time", async () => {
    const list = cmsClient(t.app, "listing");
    const made: ResourceDto[] = [];
    for (let i = 0; i < 7; i++) {
      made.push(
        await list.create({
          resourceName: `${i % 2 ? "img" : "doc"}-${i}.txt`,
          resourceAuthor: i < 3 ? "Ann" : "Ben",
          resourceMediaType: i % 2 ? "image/png" : "text/plain; charset=utf-8",
        }),
      );
    }
    const all: ResourceDto[] = [];
    let cursor: string | null = null;
    do {
      const res = await list.get(`listResources?resourceTenantId=listing&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { resources: ResourceDto[]; nextCursor: string | null };
      expect(page.resources.length).toBeLessThanOrEqual(3);
      all.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor);
    expect(all.map((r) => r.resourceUID)).toEqual(made.map((r) => r.resourceUID));

    const uids = async (query: string) =>
      (
        (await (await list.get(`listResources?resourceTenantId=listing&${query}`)).json()) as {
          resources: ResourceDto[];
        }
      ).resources.map((r) => r.resourceUID);
    const pick = (...i: number[]) => i.map((n) => made[n]?.resourceUID);
    expect(await uids("author=Ann")).toEqual(pick(0, 1, 2));
    expect(await uids("mediaType=TEXT/PLAIN")).toEqual(pick(0, 2, 4, 6));
    expect(await uids("namePrefix=img-")).toEqual(pick(1, 3, 5));
    expect(await uids("namePrefix=IMG-")).toEqual([]);
    expect(await uids("author=Ben&mediaType=image/png")).toEqual(pick(3, 5));
    expect(await uids(`createdFrom=${new Date(Date.now() + 60_000).toISOString()}`)).toEqual([]);
    expect(await uids(`createdBefore=${new Date(Date.now() + 60_000).toISOString()}`)).toEqual(
      pick(0, 1, 2, 3, 4, 5, 6),
    );
    // `tenant` is accepted as a short alias of resourceTenantId.
    const byAlias = await list.get("listResources?tenant=listing&author=Ann");
    expect(byAlias.status).toBe(200);
    expect(((await byAlias.json()) as { resources: ResourceDto[] }).resources.map((r) => r.resourceUID)).toEqual(
      pick(0, 1, 2),
    );
  });

  it("lists newest first with order=desc (cursors too) and a media type family with type/*", async () => {
    const list = cmsClient(t.app, "ordering");
    const made: ResourceDto[] = [];
    for (const [i, type] of ["image/png", "text/plain", "image/jpeg", "video/mp4", "image/webp"].entries()) {
      made.push(await list.create({ resourceName: `f-${i}`, resourceMediaType: type }));
    }
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await list.get(
        `listResources?tenant=ordering&order=desc&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(res.status).toBe(200);
      const page = (await res.json()) as { resources: ResourceDto[]; nextCursor: string | null };
      all.push(...page.resources.map((r) => r.resourceUID));
      cursor = page.nextCursor;
    } while (cursor);
    expect(all).toEqual(made.map((r) => r.resourceUID).reverse());

    const uids = async (query: string) =>
      (
        (await (await list.get(`listResources?tenant=ordering&${query}`)).json()) as { resources: ResourceDto[] }
      ).resources.map((r) => r.resourceUID);
    const pick = (...i: number[]) => i.map((n) => made[n]?.resourceUID);
    expect(await uids("mediaType=image/*")).toEqual(pick(0, 2, 4));
    expect(await uids("mediaType=IMAGE/*&order=desc")).toEqual(pick(4, 2, 0));
    expect(await uids("mediaType=video/*")).toEqual(pick(3));

    const bad = await list.get("listResources?tenant=ordering&order=sideways");
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("/query/order");
  });
});

describe("the anchor's other ways to read content", () => {
  let created: ResourceDto;
  beforeAll(async () => {
    created = await t.cms.create({ resourceName: "read.txt" }, "0123456789abcdefghij");
  });

  it("POST getData by resourceUID or resourceURI answers the whole content with the declared type", async () => {
    for (const body of [
      { resourceUID: created.resourceUID },
      { resourceURI: created.resourceURI, resourceUID: null },
    ]) {
      const res = await t.cms.post("getData", body);
      expect(res.headers.get("content-type")).toBe("text/plain");
      expect(await text(res)).toBe("0123456789abcdefghij");
    }
  });

  it("getDataUuid serves by UID, ranges included", async () => {
    const res = await t.cms.get(`getDataUuid/${created.resourceUID}`, { range: "bytes=2-4" });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe("bytes 2-4/20");
    expect(await res.text()).toBe("234");
  });

  it("getMultiPartData answers the anchor's suggested range and precondition cases", async () => {
    const path = `getMultiPartData/${created.resourceURI}`;
    const first = await t.cms.get(path, { range: "bytes=0-9" });
    expect([first.status, first.headers.get("content-range"), await first.text()]).toEqual([
      206,
      "bytes 0-9/20",
      "0123456789",
    ]);
    const last = await t.cms.get(path, { range: "bytes=-10" });
    expect(await last.text()).toBe("abcdefghij");
    await expectProblem(await t.cms.get(path, { range: "bytes=30-" }), 416, "RANGE_NOT_SATISFIABLE");
    const etag = first.headers.get("etag") as string;
    expect((await t.cms.get(path, { "if-none-match": etag })).status).toBe(304);
    await expectProblem(await t.cms.get(path, { "if-match": '"other"' }), 412, "PRECONDITION_FAILED");
  });

  it("getParentUuid takes the UID as plain text and answers 404 for a resource outside any package", async () => {
    const res = await t.app.fetch(t.app.url(`${API}/getParentUuid`), {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: created.resourceUID,
    });
    await expectProblem(res, 404, "NOT_FOUND");
  });
});

describe("the OpenAPI document", () => {
  it("lists every lifecycle, lock, package and upload endpoint with its problem statuses", async () => {
    const doc = (await (await t.app.fetch(t.app.url("/openapi.json"))).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method = "post") =>
      Object.keys(doc.paths[`${API}/${path}`]?.[method]?.responses ?? {});
    expect(statuses("updateResource")).toEqual(
      expect.arrayContaining(["200", "400", "403", "404", "409", "413", "423"]),
    );
    expect(statuses("deleteResource")).toEqual(expect.arrayContaining(["200", "409", "423"]));
    expect(statuses("unlockResourceDTO")).toEqual(expect.arrayContaining(["204", "409", "423"]));
    for (const verb of [
      "lockResourceDTO",
      "renewResourceDtoLock",
      "lockResource",
      "unlockResource",
      "renewResourceLock",
      "queryResourceLock",
      "queryResource",
      "purgeResource",
      "getData",
      "getParentUuid",
      "uploadResource",
    ]) {
      expect(statuses(verb), verb).toContain("400");
    }
    for (const path of [
      "listResources",
      "getDataUuid/{resourceUID}",
      "getRevisions/{resourceUID}",
      "getRevisionData/{resourceUID}/{revision}",
      "getMultiPartData/{context}/{path}",
    ]) {
      expect(statuses(path, "get"), path).toContain("200");
    }
  });
});
