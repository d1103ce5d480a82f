/**
 * updateResourceMetadata (issue 38): a JSON Merge Patch over the descriptive fields, guarded by
 * If-Match and by locks, 404 once deleted, no new revision, and the resource.metadata_updated event
 * in the outbox of the same change. Real app in-process, real libSQL file.
 */
import { describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("meta", {}, { transport: "in-process" });

type Described = ResourceDto & {
  title: string | null;
  altText: string | null;
  tags: string[];
  folder: string;
  metadata: Record<string, unknown>;
  metadataVersion: string;
};

const patch = (resourceUID: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.fetch(t.app.url(`${API}/updateResourceMetadata`), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ resourceUID, ...body }),
  });

describe("updateResourceMetadata", () => {
  it("merges the patch: null removes, metadata merges key by key, the rest is kept", async () => {
    const created = (await t.cms.create({
      title: "Old",
      altText: "alt",
      tags: ["a"],
      folder: "/x/",
      metadata: { keep: 1, drop: 2, nested: { a: 1, b: 2 } },
    })) as Described;
    const res = await patch(created.resourceUID, {
      patch: { title: "New", altText: null, metadata: { drop: null, added: true, nested: { b: null } } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Described;
    expect(body).toMatchObject({
      title: "New",
      altText: null,
      tags: ["a"],
      folder: "/x/",
      metadata: { keep: 1, added: true, nested: { a: 1 } },
    });
    expect(body.metadataVersion).not.toBe(created.metadataVersion);
    // No new content revision: the URI and version of the content stay.
    expect((body as Described & { versionedURI: string }).versionedURI).toBe(
      (created as Described & { versionedURI: string }).versionedURI,
    );
    expect(await t.app.deps.store.revisions(created.resourceUID)).toHaveLength(1);
    const removed = (await (
      await patch(created.resourceUID, { patch: { tags: null, folder: null, metadata: null } })
    ).json()) as Described;
    expect(removed).toMatchObject({ tags: [], folder: "/", metadata: {} });
  });

  it("If-Match on metadataVersion: 412 PRECONDITION_FAILED when it changed meanwhile", async () => {
    const created = (await t.cms.create()) as Described;
    const first = await patch(
      created.resourceUID,
      { patch: { title: "one" } },
      { "if-match": `"${created.metadataVersion}"` },
    );
    expect(first.status).toBe(200);
    const stale = await patch(
      created.resourceUID,
      { patch: { title: "two" } },
      { "if-match": `"${created.metadataVersion}"` },
    );
    await expectProblem(stale, 412, "PRECONDITION_FAILED");
    const now = (await first.json()) as Described;
    const fresh = await patch(
      created.resourceUID,
      { patch: { title: "two" } },
      { "if-match": `"${now.metadataVersion}"` },
    );
    expect(((await fresh.json()) as Described).title).toBe("two");
    await expectProblem(
      await patch(created.resourceUID, { patch: {} }, { "if-match": "3" }),
      400,
      "VALIDATION_FAILED",
      "/header/if-match",
    );
  });

  it("a locked resource: only the lock's holder with its lockID, else 423", async () => {
    const created = (await t.cms.create()) as Described;
    const lock = await t.cms.lock(created.resourceUID);
    await expectProblem(await patch(created.resourceUID, { patch: { title: "x" } }), 423, "LOCKED");
    await expectProblem(await patch(created.resourceUID, { patch: { title: "x" }, lockID: "wrong" }), 423, "LOCKED");
    const res = await patch(created.resourceUID, { patch: { title: "x" }, lockID: lock.lockID });
    expect(res.status).toBe(200);
  });

  it("refuses bad patches with a 400 naming the field, and changes nothing", async () => {
    const created = (await t.cms.create({ metadata: { big: "x".repeat(10_000) } })) as Described;
    await expectProblem(
      await patch(created.resourceUID, { patch: { folder: "nope" } }),
      400,
      "VALIDATION_FAILED",
      "/json/patch/folder",
    );
    await expectProblem(await patch(created.resourceUID, { patch: { colour: "red" } }), 400, "VALIDATION_FAILED");
    // Each half fits, the merge does not.
    await expectProblem(
      await patch(created.resourceUID, { patch: { metadata: { more: "y".repeat(10_000) } } }),
      400,
      "VALIDATION_FAILED",
      "/json/patch/metadata",
    );
    const after = (await (await t.cms.post("queryResource", { queryUID: created.resourceUID })).json()) as Described;
    expect(after.metadataVersion).toBe(created.metadataVersion);
  });

  it("404 for a deleted resource, and for none", async () => {
    const created = (await t.cms.create()) as Described;
    const lock = await t.cms.lock(created.resourceUID);
    const deleted = await t.cms.post("deleteResource", {
      resourceUID: created.resourceUID,
      author: "Author",
      lockID: lock.lockID,
    });
    expect(deleted.status, await deleted.clone().text()).toBeLessThan(300);
    await expectProblem(await patch(created.resourceUID, { patch: { title: "x" } }), 404, "NOT_FOUND");
    await expectProblem(await patch(`${"0".repeat(30)}-meta`, { patch: { title: "x" } }), 404, "NOT_FOUND");
  });

  it("records resource.metadata_updated with the new fields in the outbox", async () => {
    const created = (await t.cms.create()) as Described;
    await t.app.deps.store.webhooks.addSubscription({
      id: "sub-meta",
      url: "http://127.0.0.1:9/hook",
      secret: "whsec_AAAA",
      events: JSON.stringify(["resource.metadata_updated"]),
      tenants: "[]",
      createdAt: 0,
    });
    expect((await patch(created.resourceUID, { patch: { tags: ["Sea"], folder: "/f/" } })).status).toBe(200);
    const [delivery] = await t.app.deps.store.webhooks.deliveries("sub-meta", 10);
    expect(delivery?.type).toBe("resource.metadata_updated");
    expect(JSON.parse(delivery?.payload ?? "{}").data).toMatchObject({
      resourceUID: created.resourceUID,
      tags: ["Sea"],
      folder: "/f/",
      metadata: {},
      title: null,
    });
  });
});
