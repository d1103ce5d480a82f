/**
 * Zip packages over HTTP, as the anchor's e-learning clients use them: the start page answers,
 * every file is a resource under the zip's URI context, relative links resolve through getData.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { API, base64, expectProblem, type ResourceDto, utf8, useCmsApp } from "../helpers/cms-client.js";
import { infoJsonZip, PNG, scormZip } from "../helpers/packages.js";

const t = useCmsApp("elearn", {}, { transport: "in-process" });

const createZip = async (bytes: Uint8Array, fields: Record<string, unknown> = {}) =>
  t.cms.create(
    { resourceMediaType: "application/zip", resourceName: "lesson.zip", resourceAuthor: "Teacher", ...fields },
    bytes,
  );

const names = (list: ResourceDto[] | null) =>
  (list ?? []).map((r) => r.resourceURI.slice(r.resourceURI.indexOf("/") + 1)).sort();

async function parentOf(uid: string) {
  const res = await t.app.fetch(t.app.url(`${API}/getParentUuid`), {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: uid,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  return res.text();
}

describe("a SCORM package", () => {
  let start: ResourceDto;
  beforeAll(async () => {
    start = await createZip(await scormZip());
  });

  it("answers the manifest's launch page, with the other files in resourcesList", async () => {
    expect(start.resourceURI).toMatch(/^[0-9a-z]{30}-elearn\/index\.html$/);
    expect(start).toMatchObject({ author: "Teacher", mediaType: "text/html" });
    expect(names(start.resourcesList)).toEqual(["images/logo.png", "imsmanifest.xml", "js/app.js"]);
    const context = start.resourceURI.split("/")[0];
    for (const file of start.resourcesList ?? []) {
      expect(file.resourceURI.startsWith(`${context}/`)).toBe(true);
      expect(file.resourceUID).toMatch(/-elearn$/);
      expect(file.resourcesList).toBeNull();
    }
  });

  it("serves every file, and relative links from the start page resolve to its siblings", async () => {
    const page = t.app.url(`${API}/getData/${start.resourceURI}`);
    const html = await t.app.fetch(page);
    expect(html.headers.get("content-type")).toBe("text/html");
    expect(await html.text()).toContain('src="images/logo.png"');
    const logo = await t.app.fetch(new URL("images/logo.png", page));
    expect(logo.status).toBe(200);
    expect(logo.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await logo.arrayBuffer())).toEqual(PNG);
    const script = await t.app.fetch(new URL("js/app.js", page));
    expect(script.headers.get("content-type")).toBe("text/javascript");
    expect(await script.text()).toBe("console.log('lesson');");
  });

  it("getParentUuid of any file is the zip, which queryResource lists with all its files and getData serves", async () => {
    const zipUid = await parentOf(start.resourceUID);
    expect(await parentOf(start.resourcesList?.[0]?.resourceUID as string)).toBe(zipUid);
    const query = await t.cms.post("queryResource", { queryUID: zipUid });
    const zip = (await query.json()) as ResourceDto;
    expect(zip).toMatchObject({
      resourceUID: zipUid,
      resourceURI: `${zipUid}/lesson.zip`,
      mediaType: "application/zip",
    });
    expect(names(zip.resourcesList)).toEqual(["images/logo.png", "imsmanifest.xml", "index.html", "js/app.js"]);
    expect(new Uint8Array(await (await t.cms.get(`getData/${zip.resourceURI}`)).arrayBuffer())).toEqual(
      await scormZip(),
    );
    const children = await t.cms.get(`listResources?resourceTenantId=elearn&parentUID=${zipUid}`);
    expect(((await children.json()) as { resources: unknown[] }).resources).toHaveLength(4);
  });
});

describe("an info.json package (the anchor's demo_content.zip)", () => {
  it("info.json's startpage wins over the manifest: start.html with 3 siblings", async () => {
    const start = await createZip(await infoJsonZip());
    expect(start.resourceURI.endsWith("/start.html")).toBe(true);
    expect(names(start.resourcesList)).toEqual(["images/logo.png", "imsmanifest.xml", "info.json"]);
    expect(await t.cms.data(start.resourceURI.replace(/start\.html$/, "images/logo.png"))).toEqual(PNG);
  });

  it("also explodes a zip downloaded from resourceExternalURI and a x-zip-compressed type", async () => {
    const url = t.origin.put("demo.zip", await infoJsonZip());
    const res = await t.cms.postCreate({
      resourceMediaType: "application/x-zip-compressed",
      resourceName: "demo.zip",
      resourceExternalURI: url,
      resourceBinary: undefined,
    });
    expect(res.status).toBe(201);
    const start = (await res.json()) as ResourceDto;
    expect(res.headers.get("location")).toBe(`${API}/getData/${start.resourceURI}`);
    expect(names(start.resourcesList)).toHaveLength(3);
  });

  it("a zip declared as octet-stream is stored as an opaque file, as in the anchor", async () => {
    const created = await t.cms.create(
      { resourceMediaType: "application/octet-stream", resourceName: "opaque.zip" },
      await infoJsonZip(),
    );
    expect(created.resourcesList).toBeNull();
    await expectProblem(await t.cms.get(`getData/${created.resourceUID}/start.html`), 404, "NOT_FOUND");
  });
});

describe("a package's lifecycle", () => {
  it("deleting the zip stops serving its files; its content cannot be replaced; a file can be updated", async () => {
    const start = await createZip(await scormZip());
    const zipUid = await parentOf(start.resourceUID);

    const fileLock = await t.cms.lock(start.resourceUID);
    const updated = await t.cms.post("updateResource", { ...fileLock, resourceBinary: base64("<html>v2</html>") });
    expect(updated.status).toBe(200);
    expect(await t.cms.data(start.resourceURI)).toEqual(utf8("<html>v2</html>"));

    const zipLock = await t.cms.lock(zipUid);
    await expectProblem(
      await t.cms.post("updateResource", { ...zipLock, resourceBinary: base64("not a zip") }),
      409,
      "CONFLICT",
    );
    expect((await t.cms.post("updateResource", { ...zipLock, resourceAuthor: "New teacher" })).status).toBe(200);

    expect((await t.cms.post("deleteResource", zipLock)).status).toBe(200);
    for (const file of [start, ...(start.resourcesList ?? [])]) {
      await expectProblem(await t.cms.get(`getData/${file.resourceURI}`), 404, "NOT_FOUND");
      await expectProblem(await t.cms.post("queryResource", { queryUID: file.resourceUID }), 404, "NOT_FOUND");
    }
    const history = await (await t.cms.get(`getRevisions/${start.resourceUID}`)).json();
    expect((history as { revisions: { action: string }[] }).revisions.map((r) => r.action)).toEqual([
      "create",
      "update",
      "delete",
    ]);

    const purged = await t.cms.post("purgeResource", { resourceUID: zipUid });
    expect(((await purged.json()) as { purged: string[] }).purged).toHaveLength(5);
  });
  it("a file in a folder is updated with the LockedResourceDTO the server returned (its path echoed as resourceName)", async () => {
    const start = await createZip(await scormZip());
    const logo = (start.resourcesList ?? []).find((r) => r.resourceURI.endsWith("/images/logo.png")) as ResourceDto;
    const lock = await t.cms.lock(logo.resourceUID);
    expect(lock.resourceName).toBe("images/logo.png");
    const updated = await t.cms.post("updateResource", { ...lock, resourceAuthor: "Designer" });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ resourceName: "images/logo.png", author: "Designer" });
    // Another path is not a rename: a new name must be a plain file name.
    await expectProblem(
      await t.cms.post("updateResource", { ...lock, resourceName: "images/other.png" }),
      400,
      "VALIDATION_FAILED",
      "/json/resourceName",
    );
    const renamed = await t.cms.post("updateResource", { ...lock, resourceName: "brand.png" });
    expect(await renamed.json()).toMatchObject({ resourceName: "brand.png" });
  });
});
