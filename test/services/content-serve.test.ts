/**
 * ContentService.serve: the representation a row is answered with. A frozen row (the row cache's:
 * rows never change in place) keeps its answer per origin; any other object is answered afresh.
 */
import { describe, expect, it } from "vitest";
import type { BlobCollector } from "../../src/services/blob-collector.js";
import { createContentService } from "../../src/services/content.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";

const service = (contentOrigin?: string) =>
  createContentService({ blobs: createMemoryBlobStore(), collector: {} as BlobCollector, maxResourceBytes: 1 << 20, contentOrigin });

const row = (over: Record<string, unknown> = {}) => ({
  blobKey: "k", size: 4, sha256: "b".repeat(64), mediaType: "text/html", name: "dir/page.html", updatedAt: 1_700_000_000_000, parentUid: null, ...over,
});

describe("ContentService.serve", () => {
  it("answers a frozen row from what it built the first time, and a changed row (a new object) afresh", () => {
    const content = service();
    const cached = Object.freeze(row());
    const first = content.serve(cached, "api.test");
    expect(content.serve(cached, "api.test").entity).toBe(first.entity);
    expect(Object.isFrozen(first.entity)).toBe(true);
    const renamed = Object.freeze(row({ name: "other.html" }));
    expect(content.serve(renamed, "api.test").entity).toMatchObject({ filename: "other.html" });
    expect(content.serve(cached, "api.test").entity).toMatchObject({ filename: "page.html" });
  });

  it("never keeps what it built for a row that can still change", () => {
    const content = service();
    const mutable = row();
    expect(content.serve(mutable, undefined).entity.filename).toBe("page.html");
    mutable.name = "renamed.html";
    expect(content.serve(mutable, undefined).entity.filename).toBe("renamed.html");
  });

  it("keeps one answer per origin: active content stays sandboxed on the API origin", () => {
    const content = service("http://content.test");
    const cached = Object.freeze(row());
    const onApi = content.serve(cached, "api.test").entity;
    const onContent = content.serve(cached, "content.test").entity;
    expect(onApi).not.toEqual(onContent);
    expect(content.serve(cached, "api.test").entity).toBe(onApi);
    expect(content.serve(cached, "content.test").entity).toBe(onContent);
  });
});
