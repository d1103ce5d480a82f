/**
 * Failures of the lifecycle endpoints: status, problem+json, code and named field, and the
 * atomicity promise: a failed update keeps the old content live and leaves no new blob or revision.
 */
import { describe, expect, it, vi } from "vitest";
import {
  API,
  base64,
  cmsClient,
  expectProblem,
  tableCounts,
  utf8,
  volumeFiles,
  useCmsApp,
} from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { startTestApp } from "../helpers/test-app.js";

const LIMIT = 64 * 1024;

const t = useCmsApp(
  "lifeerr",
  {
    CMS_MAX_RESOURCE_BYTES: String(LIMIT),
    CMS_MAX_INLINE_BYTES: "1024",
    CMS_FETCH_TIMEOUT_MS: "1500",
  },
  { transport: "in-process" },
);

const UNKNOWN = "0000000000aaaaaaaaaaaaaaaaaaaa-lifeerr";

describe("createResource content fields", () => {
  const base = {
    resourceAuthor: "A",
    resourceMediaType: "text/plain",
    resourceName: "x.txt",
    resourceTenantId: "lifeerr",
  };
  it.each([
    ["neither content field", {}, ["/json/resourceBinary", "/json/resourceExternalURI"]],
    [
      "both content fields",
      { resourceBinary: base64("x"), resourceExternalURI: "http://127.0.0.1/x" },
      ["/json/resourceBinary"],
    ],
    ["an empty binary", { resourceBinary: "" }, ["/json/resourceBinary"]],
    ["a binary that is not base64", { resourceBinary: "not base64!" }, ["/json/resourceBinary"]],
    ["url-safe base64", { resourceBinary: "-_-_" }, ["/json/resourceBinary"]],
  ])("rejects %s with 400 naming the fields", async (_label, fields, pointers) => {
    const p = await expectProblem(await t.cms.post("createResource", { ...base, ...fields }), 400, "VALIDATION_FAILED");
    expect(p.errors?.map((e) => e.pointer).sort()).toEqual(pointers);
  });

  it("refuses inline content over CMS_MAX_INLINE_BYTES with 413 and stores nothing", async () => {
    const before = await volumeFiles(t.app);
    await expectProblem(
      await t.cms.post("createResource", { ...base, resourceBinary: base64(new Uint8Array(1025)) }),
      413,
      "PAYLOAD_TOO_LARGE",
      "/body/resourceBinary",
    );
    expect((await t.cms.post("createResource", { ...base, resourceBinary: base64(new Uint8Array(1024)) })).status).toBe(
      201,
    );
    expect((await volumeFiles(t.app)).length).toBe(before.length + 1);
  });
});

describe("updateResource needs the caller's live lock", () => {
  it("answers 409 LOCK_NOT_HELD without a lock and 423 LOCKED with someone else's", async () => {
    const { resourceUID } = await t.cms.create();
    const noLock = { resourceUID, author: "A", lockID: "made-up", resourceBinary: base64("new") };
    await expectProblem(await t.cms.post("updateResource", noLock), 409, "LOCK_NOT_HELD");
    const lock = await t.cms.lock(resourceUID, "Owner");
    await expectProblem(
      await t.cms.post("updateResource", { ...lock, lockID: "made-up", resourceBinary: base64("new") }),
      423,
      "LOCKED",
    );
  });

  it("the caller's own lock with another owner name: 400 naming the field that carried it", async () => {
    const { resourceUID } = await t.cms.create();
    const { lockID } = await t.cms.lock(resourceUID, "Owner");
    const content = { resourceUID, lockID, resourceBinary: base64("new") };
    const byAuthor = await expectProblem(
      await t.cms.post("updateResource", { ...content, author: "Someone" }),
      400,
      "VALIDATION_FAILED",
      "/json/author",
    );
    expect(byAuthor.detail).toContain('"Owner"');
    await expectProblem(
      await t.cms.post("updateResource", { ...content, resourceAuthor: "Someone" }),
      400,
      "VALIDATION_FAILED",
      "/json/resourceAuthor",
    );
  });

  it("without author or resourceAuthor: 400 naming author", async () => {
    const { resourceUID } = await t.cms.create();
    const { lockID } = await t.cms.lock(resourceUID, "Owner");
    const problem = await expectProblem(
      await t.cms.post("updateResource", { resourceUID, lockID, resourceBinary: base64("new") }),
      400,
      "VALIDATION_FAILED",
      "/json/author",
    );
    expect(JSON.stringify(problem)).toContain("resourceAuthor");
  });

  it("answers 404 for an unknown resource and 400 naming each bad field", async () => {
    await expectProblem(
      await t.cms.post("updateResource", { resourceUID: UNKNOWN, author: "A", lockID: "l" }),
      404,
      "NOT_FOUND",
    );
    await expectProblem(
      await t.cms.post("updateResource", { resourceUID: "x", author: "A" }),
      400,
      "VALIDATION_FAILED",
      "/json/lockID",
    );
    const both = {
      resourceUID: "x",
      author: "A",
      lockID: "l",
      resourceBinary: base64("a"),
      resourceExternalURI: t.origin.put("both", "b"),
    };
    await expectProblem(await t.cms.post("updateResource", both), 400, "VALIDATION_FAILED", "/json/resourceBinary");
    await expectProblem(
      await t.cms.post("updateResource", { resourceUID: "x", author: "A", lockID: "l", resourceName: "a\\b" }),
      400,
      "VALIDATION_FAILED",
      "/json/resourceName",
    );
    await expectProblem(
      await t.cms.post("updateResource", { resourceUID: "x", author: "A", lockID: "l", resourceName: "../b" }),
      400,
      "VALIDATION_FAILED",
      "/json/resourceName",
    );
    // A new name with '/' (not the current path echoed back) is refused too, once the resource is known.
    const created = await t.cms.create();
    const lock = await t.cms.lock(created.resourceUID);
    await expectProblem(
      await t.cms.post("updateResource", { ...lock, resourceName: "a/b" }),
      400,
      "VALIDATION_FAILED",
      "/json/resourceName",
    );
  });

  it("a rename to a name with a bidirectional control → 400 naming resourceName; a plain rename still works", async () => {
    const created = await t.cms.create();
    const lock = await t.cms.lock(created.resourceUID);
    for (const resourceName of ["invoice\u202Efdp.exe", "a\u2066b.txt", "a\u200Eb.txt"]) {
      await expectProblem(
        await t.cms.post("updateResource", { ...lock, resourceName }),
        400,
        "VALIDATION_FAILED",
        "/json/resourceName",
      );
    }
    const res = await t.cms.post("updateResource", { ...lock, resourceName: "renamed.txt" });
    expect(res.status).toBe(200);
  });
});

describe("a failed update changes nothing", () => {
  it.each([
    ["an origin error", () => t.origin.url("/status/404"), 502, "ORIGIN_FAILED"],
    ["content over the size limit", () => t.origin.url(`/gen/${LIMIT + 1}`), 413, "PAYLOAD_TOO_LARGE"],
    ["a stalled origin", () => t.origin.url("/stall"), 504, "ORIGIN_TIMEOUT"],
  ])("%s: old content stays live, no revision, no new blob", async (_label, uri, status, code) => {
    const created = await t.cms.create({}, "the old content");
    const lock = await t.cms.lock(created.resourceUID);
    const [files, counts] = [await volumeFiles(t.app), await tableCounts(t.app)];
    await expectProblem(
      await t.cms.post("updateResource", { ...lock, resourceAuthor: "changed", resourceExternalURI: uri() }),
      status,
      code,
      "/body/resourceExternalURI",
    );
    expect(await t.cms.data(created.resourceURI)).toEqual(utf8("the old content"));
    expect(await tableCounts(t.app)).toEqual(counts);
    expect(await volumeFiles(t.app)).toEqual(files);
    const query = await t.cms.post("queryResource", { queryUID: created.resourceUID });
    expect(((await query.json()) as { author: string }).author).toBe("Author");
  });

  it("a lock lost during the download (expired and taken) refuses the update and discards the new content", async () => {
    // The lock expires when the test moves the app's clock, not after a real wait.
    const time = fakeClock();
    const slow = await startTestApp({ CMS_LOCK_TTL: "60" }, { clock: time.clock, transport: "in-process" });
    try {
      const c = cmsClient(slow, "slowlock");
      const created = await c.create({}, "kept");
      const lock = await c.lock(created.resourceUID, "A");
      const files = await volumeFiles(slow);
      t.origin.put("late", "new content that must not land");
      // The origin answers only after the lock expired and B took it; the commit-time guard decides.
      const late = t.origin.url("/slow/1500/late");
      const update = c.post("updateResource", { ...lock, resourceExternalURI: late });
      // The download has begun, so the update passed its first lock check with A's lock live.
      await vi.waitFor(() => expect(t.origin.requests.map((r) => r.url)).toContain(new URL(late).pathname), {
        timeout: 1500,
        interval: 10,
      });
      time.advance(60_000);
      await c.lock(created.resourceUID, "B");
      await expectProblem(await update, 423, "LOCKED");
      expect(await c.data(created.resourceURI)).toEqual(utf8("kept"));
      expect(await volumeFiles(slow)).toEqual(files);
      expect(slow.unhandledErrors()).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});

describe("deleteResource and purgeResource", () => {
  it("delete needs the lock (409/423) and a known resource (404)", async () => {
    const { resourceUID } = await t.cms.create();
    await expectProblem(
      await t.cms.post("deleteResource", { resourceUID, author: "A", lockID: "x" }),
      409,
      "LOCK_NOT_HELD",
    );
    const lock = await t.cms.lock(resourceUID, "A");
    // The caller's own lock named with another owner: the field is wrong, not the lock (400, not 423).
    await expectProblem(
      await t.cms.post("deleteResource", { ...lock, author: "B" }),
      400,
      "VALIDATION_FAILED",
      "/json/author",
    );
    await expectProblem(
      await t.cms.post("deleteResource", { resourceUID: UNKNOWN, author: "A", lockID: "x" }),
      404,
      "NOT_FOUND",
    );
    expect((await t.cms.post("deleteResource", lock)).status).toBe(200);
    await expectProblem(await t.cms.post("deleteResource", lock), 404, "NOT_FOUND");
  });

  it("purge answers 404 for an unknown resource and 400 without a UID", async () => {
    await expectProblem(await t.cms.post("purgeResource", { resourceUID: UNKNOWN }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("purgeResource", {}), 400, "VALIDATION_FAILED", "/json/resourceUID");
  });
});

describe("reads", () => {
  it("POST getData needs resourceUID or resourceURI and answers 404 for unknown ones (the anchor 400/500)", async () => {
    const p = await expectProblem(await t.cms.post("getData", {}), 400, "VALIDATION_FAILED");
    expect(p.errors?.map((e) => e.pointer).sort()).toEqual(["/json/resourceURI", "/json/resourceUID"].sort());
    await expectProblem(await t.cms.post("getData", { resourceUID: UNKNOWN }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("getData", { resourceUID: "../../etc/passwd-t" }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("getData", { resourceURI: "no-slash" }), 404, "NOT_FOUND");
  });

  it("getDataUuid answers 404 for an unknown UID (the anchor answered 400)", async () => {
    await expectProblem(await t.cms.get(`getDataUuid/${UNKNOWN}`), 404, "NOT_FOUND");
  });

  it("getParentUuid: 404 unknown, 400 empty, 415 for another content type, JSON strings accepted", async () => {
    const post = (body: string, type: string) =>
      t.app.fetch(t.app.url(`${API}/getParentUuid`), { method: "POST", headers: { "content-type": type }, body });
    await expectProblem(await post(UNKNOWN, "text/plain"), 404, "NOT_FOUND");
    await expectProblem(await post(JSON.stringify(UNKNOWN), "application/json"), 404, "NOT_FOUND");
    await expectProblem(await post("", "text/plain"), 400, "VALIDATION_FAILED", "/body");
    await expectProblem(await post("{}", "application/json"), 400, "VALIDATION_FAILED", "/body");
    await expectProblem(await post(UNKNOWN, "application/octet-stream"), 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("revisions: 404 for an unknown resource or revision, 400 for a malformed revision number", async () => {
    const { resourceUID } = await t.cms.create();
    await expectProblem(await t.cms.get(`getRevisions/${UNKNOWN}`), 404, "NOT_FOUND");
    await expectProblem(await t.cms.get(`getRevisionData/${resourceUID}/2`), 404, "NOT_FOUND");
    await expectProblem(
      await t.cms.get(`getRevisionData/${resourceUID}/zero`),
      400,
      "VALIDATION_FAILED",
      "/param/revision",
    );
  });

  it.each([
    ["no tenant", "limit=5", "/query/resourceTenantId"],
    ["a bad cursor", "resourceTenantId=lifeerr&cursor=garbage", "/query/cursor"],
    ["limit 0", "resourceTenantId=lifeerr&limit=0", "/query/limit"],
    ["limit 201", "resourceTenantId=lifeerr&limit=201", "/query/limit"],
    ["a bad date", "resourceTenantId=lifeerr&createdFrom=yesterday", "/query/createdFrom"],
    ["a repeated tenant", "resourceTenantId=lifeerr&resourceTenantId=other", "/query/resourceTenantId"],
    ["tenant disagreeing with resourceTenantId", "resourceTenantId=lifeerr&tenant=other", "/query/tenant"],
    ["a bad tenant alias", "tenant=no%2Fslash", "/query/tenant"],
  ])("listResources with %s → 400 naming the parameter", async (_label, query, pointer) => {
    await expectProblem(await t.cms.get(`listResources?${query}`), 400, "VALIDATION_FAILED", pointer);
  });
});
