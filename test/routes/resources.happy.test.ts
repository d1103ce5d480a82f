/** createResource → getData over a real socket, with a real loopback origin, temp volume and libSQL file. */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { type Origin, patternBytes, startOrigin } from "../helpers/origin.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";
import { buildZip } from "../helpers/zip-writer.js";
import { UNSET_DESCRIPTION } from "../helpers/descriptions.js";

let origin: Origin;
let app: TestApp;

beforeAll(async () => {
  origin = await startOrigin();
  app = await startTestApp({}, { transport: "in-process" });
});
afterAll(async () => {
  await app.close();
  await origin.close();
});
afterEach(() => expect(app.unhandledErrors()).toEqual([]));

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Fields over the defaults; one given as undefined is left out of the body. */
async function create(fields: Partial<Record<string, string | undefined>>) {
  const res = await app.fetch(
    app.url("/cms/v1.0/createResource"),
    json({
      resourceAuthor: "Test Author",
      resourceMediaType: "image/png",
      resourceName: "logo.png",
      resourceTenantId: "zaq12345",
      ...fields,
    }),
  );
  return { res, body: (await res.json()) as Record<string, unknown> };
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe("createResource", () => {
  it("answers 201 with the seed's four fields, Location and content facts", async () => {
    const bytes = patternBytes(0, 5000);
    const { res, body } = await create({ resourceExternalURI: origin.put("logo", bytes) });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const uid = body.resourceUID as string;
    expect(uid).toMatch(/^[0-9a-hjkmnp-tv-z]{30}-zaq12345$/);
    expect(body).toEqual({
      resourceUID: uid,
      author: "Test Author",
      resourceURI: `${uid}/logo.png`,
      versionedURI: `${uid}/logo.png?v=${sha256(bytes).slice(0, 16)}`,
      resourcesList: null,
      mediaType: "image/png",
      size: 5000,
      sha256: sha256(bytes),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      ...UNSET_DESCRIPTION, // issue 38
    });
    expect(res.headers.get("location")).toBe(`/cms/v1.0/getData/${uid}/logo.png`);
  });

  it("gives every resource a different, time-sortable UID", async () => {
    const url = origin.put("same", "same bytes");
    const a = await create({ resourceExternalURI: url });
    const b = await create({ resourceExternalURI: url });
    expect(a.body.resourceUID).not.toBe(b.body.resourceUID);
    expect(String(a.body.resourceUID) < String(b.body.resourceUID)).toBe(true);
  });

  it("stores identical content once per tenant and separately for another tenant", async () => {
    const bytes = patternBytes(7, 4096 + 7);
    const url = origin.put("dedup", bytes);
    const before = (await filesUnder(app.volume)).length;
    await create({ resourceExternalURI: url, resourceTenantId: "dedup-a" });
    await create({ resourceExternalURI: url, resourceTenantId: "dedup-a", resourceName: "other.png" });
    expect((await filesUnder(app.volume)).length).toBe(before + 1);
    await create({ resourceExternalURI: url, resourceTenantId: "dedup-b" });
    const files = await filesUnder(app.volume);
    expect(files.length).toBe(before + 2);
    // Keys never carry user-controlled text: no tenant id or resource name in any path.
    for (const f of files) expect(f).not.toMatch(/dedup-|other\.png|logo\.png/);
  });

  it("follows redirects from the origin", async () => {
    origin.put("target", "redirected content");
    const { res, body } = await create({
      resourceExternalURI: origin.url("/redirect/3/target"),
      resourceMediaType: "text/plain",
    });
    expect(res.status).toBe(201);
    const data = await app.fetch(app.url(`/cms/v1.0/getData/${body.resourceURI}`));
    expect(await data.text()).toBe("redirected content");
  });

  it("sends the origin no credentials or cookies", async () => {
    const url = origin.put("creds", "x");
    const res = await app.fetch(app.url("/cms/v1.0/createResource"), {
      ...json({
        resourceAuthor: "a",
        resourceMediaType: "text/plain",
        resourceName: "c.txt",
        resourceTenantId: "t1",
        resourceExternalURI: url,
      }),
      headers: { "content-type": "application/json", authorization: "Bearer secret", cookie: "session=secret" },
    });
    expect(res.status).toBe(201);
    const seen = origin.requests.filter((r) => r.url === "/bytes/creds");
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.authorization).toBeUndefined();
    expect(seen[0]?.headers.cookie).toBeUndefined();
  });

  it("survives 100 concurrent creates with 100 distinct rows and readable content", async () => {
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const url = origin.put(`c${i}`, `content number ${i}`);
        return create({
          resourceExternalURI: url,
          resourceName: `f${i}.txt`,
          resourceMediaType: "text/plain",
          resourceTenantId: "conc",
        });
      }),
    );
    expect(results.map((r) => r.res.status)).toEqual(Array(100).fill(201));
    expect(new Set(results.map((r) => r.body.resourceUID)).size).toBe(100);
    const texts = await Promise.all(
      results.map(async (r) => (await app.fetch(app.url(`/cms/v1.0/getData/${r.body.resourceURI}`))).text()),
    );
    expect(texts).toEqual(Array.from({ length: 100 }, (_, i) => `content number ${i}`));
  });
});

describe("createResource without resourceMediaType", () => {
  const GIF = Buffer.from("R0lGODlhAQABAAAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
  const SVG = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';

  it.each([
    ["the origin's Content-Type", "image/png", PNG_1x1, "image/png"],
    ["its essence only: parameters are dropped", 'text/plain; charset=utf-8; x="a\\"; b"', "hello", "text/plain"],
    ["in lower case", "Image/PNG", PNG_1x1, "image/png"],
    ["a type without a signature to check (SVG), as the origin says", "image/svg+xml", SVG, "image/svg+xml"],
    ["the bytes' type where they contradict a type that has a signature", "image/png", GIF, "image/gif"],
    [
      "application/octet-stream for a claimed signature the bytes lack",
      "image/png",
      "<html>hi</html>",
      "application/octet-stream",
    ],
    ["the bytes' type for an origin's application/octet-stream", "application/octet-stream", PNG_1x1, "image/png"],
    ["the bytes' type without a Content-Type", null, PNG_1x1, "image/png"],
    ["the bytes' type for an invalid Content-Type", "png, or so", PNG_1x1, "image/png"],
    ["application/octet-stream when neither says", null, "just text", "application/octet-stream"],
  ])("stores %s", async (_what, originType, bytes, expected) => {
    const url = origin.put(`typed-${crypto.randomUUID()}`, bytes, originType);
    const { res, body } = await create({ resourceExternalURI: url, resourceMediaType: undefined });
    expect(res.status).toBe(201);
    expect(body.mediaType).toBe(expected);
    const data = await app.fetch(app.url(`/cms/v1.0/getData/${body.resourceURI as string}`));
    expect(data.headers.get("content-type")).toMatch(new RegExp(`^${expected.replace("+", "\\+")}`));
    await data.arrayBuffer();
  });

  it("sniffs inline bytes (resourceBinary), else application/octet-stream", async () => {
    const png = await create({ resourceBinary: PNG_1x1.toString("base64"), resourceMediaType: undefined });
    expect(png.body.mediaType).toBe("image/png");
    const text = await create({ resourceBinary: btoa("plain"), resourceMediaType: undefined });
    expect(text.body.mediaType).toBe("application/octet-stream");
  });

  it("does not make a package of a zip whose type it was not told (only a declared zip type explodes)", async () => {
    const zip = await buildZip([{ name: "index.html", data: "<p>hi</p>" }]);
    const { res, body } = await create({
      resourceExternalURI: origin.put("undeclared.zip", zip, "application/zip"),
      resourceMediaType: undefined,
      resourceName: "undeclared.zip",
    });
    expect(res.status).toBe(201);
    expect(body).toMatchObject({ mediaType: "application/zip", resourcesList: null, size: zip.length });
  });
});

describe("getData", () => {
  let uri: string;
  const bytes = patternBytes(0, 10_000);

  beforeAll(async () => {
    const { body } = await create({
      resourceExternalURI: origin.put("data", bytes),
      resourceMediaType: "application/pdf",
      resourceName: 'Résumé "final".pdf',
      resourceTenantId: "reader",
    });
    uri = body.resourceURI as string;
  });

  const path = () => {
    const [uid, name] = uri.split("/") as [string, string];
    return `/cms/v1.0/getData/${uid}/${encodeURIComponent(name)}`;
  };

  it("streams the content with its headers", async () => {
    const res = await app.fetch(app.url(path()));
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-length")).toBe("10000");
    expect(res.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(new Date(res.headers.get("last-modified") as string).getTime()).toBeGreaterThan(0);
    const disposition = res.headers.get("content-disposition") as string;
    expect(disposition).toMatch(/^inline; /);
    expect(disposition).toContain("filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("answers HEAD with the same headers and no body", async () => {
    const res = await app.fetch(app.url(path()), { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe("10000");
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it("serves a byte range and multiple ranges", async () => {
    const one = await app.fetch(app.url(path()), { headers: { range: "bytes=100-199" } });
    expect(one.status).toBe(206);
    expect(one.headers.get("content-range")).toBe("bytes 100-199/10000");
    expect(new Uint8Array(await one.arrayBuffer())).toEqual(bytes.slice(100, 200));

    const many = await app.fetch(app.url(path()), { headers: { range: "bytes=0-9,-10" } });
    expect(many.status).toBe(206);
    expect(many.headers.get("content-type")).toMatch(/^multipart\/byteranges; boundary=/);
    const text = Buffer.from(await many.arrayBuffer()).toString("latin1");
    expect(text).toContain("Content-Range: bytes 0-9/10000");
    expect(text).toContain("Content-Range: bytes 9990-9999/10000");
  });

  it("answers 416 with bytes */size past the end, and 304 for a matching ETag", async () => {
    const bad = await app.fetch(app.url(path()), { headers: { range: "bytes=20000-" } });
    expect(bad.status).toBe(416);
    expect(bad.headers.get("content-range")).toBe("bytes */10000");
    expect(bad.headers.get("content-type")).toBe("application/problem+json");

    const etag = (await app.fetch(app.url(path()), { method: "HEAD" })).headers.get("etag") as string;
    const cached = await app.fetch(app.url(path()), { headers: { "if-none-match": etag } });
    expect(cached.status).toBe(304);
    const stale = await app.fetch(app.url(path()), { headers: { "if-match": '"nope"' } });
    expect(stale.status).toBe(412);
  });
});
