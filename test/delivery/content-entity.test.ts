/**
 * contentEntities(content).serve: the representation a row is answered with (HTTP's, not the
 * content service's). A frozen row (the row cache's:
 * rows never change in place) keeps its answer per origin; any other object is answered afresh.
 */
import { describe, expect, it } from "vitest";
import { contentEntities } from "../../src/delivery/content-entity.js";
import type { BlobCollector } from "../../src/services/blob-collector.js";
import { createContentService } from "../../src/services/content.js";
import type { BlobKey } from "../../src/storage/blob-store.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";

const service = (contentOrigin?: string) =>
  contentEntities(
    createContentService({
      blobs: createMemoryBlobStore(),
      collector: {} as BlobCollector,
      maxResourceBytes: 1 << 20,
      contentOrigin,
    }),
  );

const row = (over: Record<string, unknown> = {}) => ({
  blobKey: "k",
  size: 4,
  sha256: "b".repeat(64),
  mediaType: "text/html",
  name: "dir/page.html",
  updatedAt: 1_700_000_000_000,
  parentUid: null,
  ...over,
});

describe("contentEntities(content).serve", () => {
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

  it("is one per content service, so the route and the fast paths share what they built", () => {
    const content = createContentService({
      blobs: createMemoryBlobStore(),
      collector: {} as BlobCollector,
      maxResourceBytes: 1 << 20,
    });
    const cached = Object.freeze(row());
    expect(contentEntities(content)).toBe(contentEntities(content));
    expect(contentEntities(content).serve(cached, "api.test")).toBe(contentEntities(content).serve(cached, "api.test"));
    expect(contentEntities(content)).not.toBe(service());
  });

  it("opens the row's bytes through the content service", async () => {
    const blobs = createMemoryBlobStore();
    const content = createContentService({ blobs, collector: {} as BlobCollector, maxResourceBytes: 1 << 20 });
    await blobs.put("t/k" as BlobKey, new Response("hello").body as ReadableStream<Uint8Array>);
    const { open } = contentEntities(content).serve(row({ blobKey: "t/k", size: 5 }), undefined);
    expect(new TextDecoder().decode(await new Response(await open({ start: 1, end: 3 })).arrayBuffer())).toBe("ell");
  });
});
