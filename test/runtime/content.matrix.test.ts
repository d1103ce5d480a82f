/**
 * Content reads and a resource's lifecycle, one spec set over every runtime (test/helpers/describe-matrix.ts):
 * in-process, the Node entry's server and the Bun entry, each over a real socket on 127.0.0.1. The
 * route specifications in test/routes/ run in-process; this is where the runtimes' own senders (the
 * getData fast paths, the adapters' HEAD and streaming) answer the same requests.
 */
import { createHash } from "node:crypto";
import { beforeAll, expect, it } from "vitest";
import { API, cmsClient, expectProblem, type ResourceDto } from "../helpers/cms-client.js";
import { describeMatrix } from "../helpers/describe-matrix.js";

/** 200 KiB: above one socket write, so a full answer streams in several chunks. */
const SIZE = 200 * 1024;
const BYTES = Uint8Array.from({ length: SIZE }, (_, i) => (i * 31 + (i >> 8)) & 0xff);

describeMatrix("content over every runtime", (t) => {
  let created: ResourceDto;
  let path: string;
  beforeAll(async () => {
    created = await cmsClient(t, "matrix").create(
      { resourceName: "blob.bin", resourceMediaType: "application/octet-stream" },
      BYTES,
    );
    path = `${API}/getData/${created.resourceURI}`;
  });

  it("full GET: 200 with every byte, its length, a strong ETag and byte ranges offered", async () => {
    const res = await t.fetch(t.url(path));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-length")).toBe(String(SIZE));
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(BYTES);
  });

  it("HEAD: the GET's status and headers, no body", async () => {
    const get = await t.fetch(t.url(path));
    await get.arrayBuffer();
    const head = await t.fetch(t.url(path), { method: "HEAD" });
    expect(head.status).toBe(200);
    for (const name of ["content-type", "content-length", "etag", "accept-ranges", "last-modified"]) {
      expect(head.headers.get(name), name).toBe(get.headers.get(name));
    }
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it("ranges: a slice, an open range and a suffix are 206 with their bytes; past the end is 416", async () => {
    for (const [range, from, to] of [
      ["bytes=1000-1999", 1000, 1999],
      [`bytes=${SIZE - 10}-`, SIZE - 10, SIZE - 1],
      ["bytes=-5", SIZE - 5, SIZE - 1],
    ] as const) {
      const res = await t.fetch(t.url(path), { headers: { range } });
      expect(res.status, range).toBe(206);
      expect(res.headers.get("content-range"), range).toBe(`bytes ${from}-${to}/${SIZE}`);
      expect(res.headers.get("content-length"), range).toBe(String(to - from + 1));
      expect(new Uint8Array(await res.arrayBuffer()), range).toEqual(BYTES.slice(from, to + 1));
    }
    await expectProblem(
      await t.fetch(t.url(path), { headers: { range: `bytes=${SIZE}-` } }),
      416,
      "RANGE_NOT_SATISFIABLE",
    );
  });

  it("conditional: If-None-Match with the ETag is 304; If-Range with another ETag gives the whole; If-Match with another is 412", async () => {
    const etag = (await t.fetch(t.url(path), { method: "HEAD" })).headers.get("etag") as string;
    const notModified = await t.fetch(t.url(path), { headers: { "if-none-match": etag } });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toBe(etag);
    expect((await notModified.arrayBuffer()).byteLength).toBe(0);

    const stale = await t.fetch(t.url(path), { headers: { range: "bytes=0-9", "if-range": '"another"' } });
    expect(stale.status).toBe(200);
    expect(new Uint8Array(await stale.arrayBuffer())).toEqual(BYTES);
    const fresh = await t.fetch(t.url(path), { headers: { range: "bytes=0-9", "if-range": etag } });
    expect(fresh.status).toBe(206);
    expect(new Uint8Array(await fresh.arrayBuffer())).toEqual(BYTES.slice(0, 10));

    await expectProblem(
      await t.fetch(t.url(path), { headers: { "if-match": '"another"' } }),
      412,
      "PRECONDITION_FAILED",
    );
  });

  it("lifecycle: create → get → delete → get is 404", async () => {
    const cms = cmsClient(t, "matrix");
    const own = await cms.create({ resourceName: "short-lived.txt" }, "here for a moment");
    expect(new TextDecoder().decode(await cms.data(own.resourceURI))).toBe("here for a moment");
    const lock = await cms.lock(own.resourceUID);
    expect((await cms.post("deleteResource", lock)).status).toBe(200);
    await expectProblem(await cms.get(`getData/${own.resourceURI}`), 404, "NOT_FOUND");
    // HEAD of the gone resource: the problem's status and type, and no body.
    const head = await t.fetch(t.url(`${API}/getData/${own.resourceURI}`), { method: "HEAD" });
    expect([head.status, head.headers.get("content-type")]).toEqual([404, "application/problem+json"]);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });
});

const IMMUTABLE = "public, max-age=31536000, immutable";
type Versioned = ResourceDto & { versionedURI: string };

/**
 * Issue 28's cache policy on every runtime: the runtimes' fast paths send the mutable URL's head
 * themselves, so the policy (Cache-Control, the Link to the versioned URL, Vary) must come out of
 * them exactly as out of the app. Twice each: the second read is answered from the fast path's caches.
 */
describeMatrix(
  "cache policy over every runtime",
  (t) => {
    let created: Versioned;
    beforeAll(async () => {
      created = (await cmsClient(t, "cached").create({ resourceName: "c.txt" }, "cacheable bytes")) as Versioned;
    });
    const version = () => createHash("sha256").update("cacheable bytes").digest("hex").slice(0, 16);

    it("mutable URL: max-age from CMS_CACHE_MAX_AGE, a duplicate Link to the versioned URL, Vary", async () => {
      expect(created.versionedURI).toBe(`${created.resourceURI}?v=${version()}`);
      for (const method of ["GET", "GET", "HEAD"]) {
        const res = await t.fetch(t.url(`${API}/getData/${created.resourceURI}`), { method });
        expect(res.status, method).toBe(200);
        expect(res.headers.get("cache-control"), method).toBe("public, max-age=7, stale-while-revalidate=3");
        expect(res.headers.get("link"), method).toBe(`<${API}/getData/${created.versionedURI}>; rel="duplicate"`);
        expect(res.headers.get("vary"), method).toBe("Want-Content-Digest");
        await res.arrayBuffer();
      }
    });

    it("versioned URL: immutable for a year, no Link further; a range and a 304 keep the policy", async () => {
      const url = t.url(`${API}/getData/${created.versionedURI}`);
      for (let i = 0; i < 2; i++) {
        const res = await t.fetch(url);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe("cacheable bytes");
        expect(res.headers.get("cache-control")).toBe(IMMUTABLE);
        expect(res.headers.get("link")).toBeNull();
        expect(res.headers.get("vary")).toBe("Want-Content-Digest");
      }
      const range = await t.fetch(url, { headers: { range: "bytes=0-8" } });
      expect([range.status, await range.text(), range.headers.get("cache-control")]).toEqual([
        206,
        "cacheable",
        IMMUTABLE,
      ]);
      const etag = `"${createHash("sha256").update("cacheable bytes").digest("hex")}"`;
      const again = await t.fetch(url, { headers: { "if-none-match": etag } });
      expect([again.status, again.headers.get("cache-control")]).toEqual([304, IMMUTABLE]);
      await expectProblem(
        await t.fetch(`${url.slice(0, url.indexOf("?"))}?v=${"0".repeat(16)}`),
        404,
        "VERSION_NOT_FOUND",
      );
    });
  },
  { env: { CMS_CACHE_MAX_AGE: "7", CMS_CACHE_STALE_WHILE_REVALIDATE: "3" } },
);
