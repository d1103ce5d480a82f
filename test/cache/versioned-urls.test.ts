/**
 * Issue 28 §1–2 over a real socket: content-versioned URLs (`getData/<uri>?v=<sha-256 prefix>`),
 * `versionedURI` in the resource answers, the Link from the mutable URL to the versioned one, and
 * the Cache-Control each kind of URL gets. Auth is off, so reads are public.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API, base64, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("vers");
const tuned = useCmsApp("tuned", { CMS_CACHE_MAX_AGE: "10", CMS_CACHE_STALE_WHILE_REVALIDATE: "5" });

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const IMMUTABLE = "public, max-age=31536000, immutable";
type Versioned = ResourceDto & { versionedURI: string };

async function update(uid: string, text: string): Promise<Record<string, unknown>> {
  const lock = await t.cms.lock(uid, "Editor");
  const res = await t.cms.post("updateResource", { ...lock, resourceAuthor: "Editor", resourceBinary: base64(text) });
  expect(res.status, await res.clone().text()).toBe(200);
  await t.cms.post("unlockResourceDTO", { resourceUID: uid, author: "Editor", lockID: lock.lockID });
  return (await res.json()) as Record<string, unknown>;
}

describe("versioned URLs", () => {
  it("createResource, queryResource and listResources give versionedURI: the URI with 16 hex of the SHA-256", async () => {
    const created = (await t.cms.create({ resourceName: "v.txt" }, "first bytes")) as Versioned;
    expect(created.versionedURI).toBe(`${created.resourceURI}?v=${sha256("first bytes").slice(0, 16)}`);
    const queried = await t.cms.post("queryResource", { queryUID: created.resourceUID });
    expect(((await queried.json()) as Versioned).versionedURI).toBe(created.versionedURI);
    const listed = await t.cms.get("listResources?tenant=vers&limit=100");
    const items = ((await listed.json()) as { resources: Versioned[] }).resources;
    expect(items.find((r) => r.resourceUID === created.resourceUID)?.versionedURI).toBe(created.versionedURI);
  });

  it("serves the named content as immutable; the mutable URL links to it and revalidates each time", async () => {
    const created = (await t.cms.create({ resourceName: "w.txt" }, "some bytes")) as Versioned;
    const versioned = await t.cms.get(`getData/${created.versionedURI}`);
    expect(versioned.status).toBe(200);
    expect(await versioned.text()).toBe("some bytes");
    expect(versioned.headers.get("cache-control")).toBe(IMMUTABLE);
    expect(versioned.headers.get("vary")).toBe("Want-Content-Digest");
    // All 64 hex digits, in either case, name it too.
    const full = await t.cms.get(`getData/${created.resourceURI}?v=${sha256("some bytes").toUpperCase()}`);
    expect(full.status).toBe(200);
    expect(full.headers.get("cache-control")).toBe(IMMUTABLE);

    const mutable = await t.cms.get(`getData/${created.resourceURI}`);
    expect(mutable.headers.get("cache-control")).toBe("public, no-cache");
    expect(mutable.headers.get("link")).toBe(`<${API}/getData/${created.versionedURI}>; rel="duplicate"`);
    expect(mutable.headers.get("vary")).toBe("Want-Content-Digest");
    await mutable.arrayBuffer();
  });

  it("an earlier revision's version still serves its bytes after an update; the update answer has the new one", async () => {
    const created = (await t.cms.create({ resourceName: "u.txt" }, "old text")) as Versioned;
    const updated = await update(created.resourceUID, "new text");
    expect(updated.versionedURI).toBe(`${created.resourceURI}?v=${sha256("new text").slice(0, 16)}`);
    const old = await t.cms.get(`getData/${created.versionedURI}`);
    expect(await old.text()).toBe("old text");
    expect(old.headers.get("cache-control")).toBe(IMMUTABLE);
    expect(old.headers.get("etag")).toBe(`"${sha256("old text")}"`);
    const now = await t.cms.get(`getData/${updated.versionedURI}`);
    expect(await now.text()).toBe("new text");
    // Ranges and validators behave on versioned URLs as on any other.
    const range = await t.cms.get(`getData/${created.versionedURI}`, { range: "bytes=0-2" });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe("old");
    const again = await t.cms.get(`getData/${created.versionedURI}`, { "if-none-match": `"${sha256("old text")}"` });
    expect(again.status).toBe(304);
    expect(again.headers.get("cache-control")).toBe(IMMUTABLE);
  });

  it("a v naming no revision of this resource is 404 VERSION_NOT_FOUND, a malformed one 400 naming v", async () => {
    const created = (await t.cms.create({ resourceName: "n.txt" }, "only")) as Versioned;
    const other = (await t.cms.create({ resourceName: "o.txt" }, "another")) as Versioned;
    await expectProblem(
      await t.cms.get(`getData/${created.resourceURI}?v=${"0".repeat(16)}`),
      404,
      "VERSION_NOT_FOUND",
    );
    // Another resource's content is not a version of this one.
    const foreign = other.versionedURI.slice(other.versionedURI.indexOf("?"));
    await expectProblem(await t.cms.get(`getData/${created.resourceURI}${foreign}`), 404, "VERSION_NOT_FOUND");
    for (const bad of ["abc", "0123456789abcde", "z".repeat(16), "0".repeat(65), ""]) {
      await expectProblem(
        await t.cms.get(`getData/${created.resourceURI}?v=${bad}`),
        400,
        "VALIDATION_FAILED",
        "/query/v",
      );
    }
  });

  it("getRevisionData is immutable; getDataUuid follows the mutable policy", async () => {
    const created = (await t.cms.create({ resourceName: "r.txt" }, "rev")) as Versioned;
    const rev = await t.cms.get(`getRevisionData/${created.resourceUID}/1`);
    expect(rev.status).toBe(200);
    expect(rev.headers.get("cache-control")).toBe(IMMUTABLE);
    await rev.arrayBuffer();
    const byUid = await t.cms.get(`getDataUuid/${created.resourceUID}`);
    expect(byUid.headers.get("cache-control")).toBe("public, no-cache");
    await byUid.arrayBuffer();
  });
});

describe("CMS_CACHE_MAX_AGE", () => {
  it("makes a public mutable URL fresh for N seconds with the stale window; versioned URLs stay immutable", async () => {
    const created = (await tuned.cms.create({ resourceName: "m.txt" }, "tuned")) as Versioned;
    // Twice: the second answer comes from the fast path's row cache.
    for (let i = 0; i < 2; i++) {
      const res = await tuned.cms.get(`getData/${created.resourceURI}`);
      expect(res.headers.get("cache-control")).toBe("public, max-age=10, stale-while-revalidate=5");
      await res.arrayBuffer();
    }
    const versioned = await tuned.cms.get(`getData/${created.versionedURI}`);
    expect(versioned.headers.get("cache-control")).toBe(IMMUTABLE);
    await versioned.arrayBuffer();
  });
});
