/**
 * getData image derivatives (issue 30) over a real Node server on 127.0.0.1, with real images made
 * by sharp here (a JPEG with EXIF orientation and GPS, a PNG), a decompression-bomb PNG header
 * crafted by hand, an SVG and a corrupt JPEG; a real libSQL file and blobs on disk.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";
import { bombPng } from "./bomb.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = async (res: Response) => new Uint8Array(await res.arrayBuffer());

describe("getData image derivatives", () => {
  const t = useCmsApp("images", {
    CMS_IMAGE_PRESETS: JSON.stringify({ thumb: { width: 16, height: 16, fit: "cover", format: "webp" } }),
    CMS_PUBLIC_URL: "https://cms.example.org", // signed links are built on it (only their path is fetched here)
  });
  let photo: ResourceDto;
  let png: ResourceDto;
  const data = (uri: string, query: string, headers: Record<string, string> = {}, method = "GET") =>
    t.app.fetch(t.app.url(`${API}/getData/${uri}?${query}`), { method, headers });

  beforeAll(async () => {
    // 60 × 40 stored, EXIF orientation 6 (shown rotated 90°: 40 × 60), with a GPS position.
    const jpeg = await sharp({ create: { width: 60, height: 40, channels: 3, background: "#c33" } })
      .jpeg()
      .withExif({ IFD3: { GPSLatitudeRef: "N", GPSLatitude: "52/1 30/1 0/1" } })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect((await sharp(jpeg).metadata()).exif).toBeDefined();
    photo = await t.cms.create({ resourceName: "photo.jpg", resourceMediaType: "image/jpeg" }, jpeg);
    const pngBytes = await sharp({ create: { width: 100, height: 50, channels: 4, background: "#3c3" } })
      .png()
      .toBuffer();
    png = await t.cms.create({ resourceName: "chart.png", resourceMediaType: "image/png" }, pngBytes);
  });

  it("resizes, applies EXIF orientation and strips metadata (no GPS leaves the service)", async () => {
    const res = await data(photo.resourceURI, "width=20&format=jpeg");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    const out = await sharp(Buffer.from(await bytesOf(res))).metadata();
    expect([out.width, out.height]).toEqual([20, 30]);
    expect(out.exif).toBeUndefined();
    expect(out.orientation).toBeUndefined();
    expect(out.space).toBe("srgb");
  });

  it("never enlarges past the source unless enlarge=true", async () => {
    const dims = async (query: string) => {
      const res = await data(png.resourceURI, query);
      expect(res.status, await res.clone().text()).toBe(200);
      const out = await sharp(Buffer.from(await bytesOf(res))).metadata();
      return [out.width, out.height];
    };
    // 100 × 50 source: a 4000 × 4000 fill stays within it (was 16 MP).
    for (const [w, h] of [await dims("width=4000&height=4000&fit=fill&format=png"), await dims("width=400")]) {
      expect(w).toBeLessThanOrEqual(100);
      expect(h).toBeLessThanOrEqual(50);
    }
    expect(await dims("width=400&enlarge=true&format=png")).toEqual([400, 200]);
    await expectProblem(
      await data(png.resourceURI, "width=10&enlarge=yes"),
      400,
      "VALIDATION_FAILED",
      "/query/enlarge",
    );
  });

  it("width alone keeps the aspect ratio; both mean cover; presets apply", async () => {
    const one = await sharp(Buffer.from(await bytesOf(await data(png.resourceURI, "width=50")))).metadata();
    expect([one.format, one.width, one.height]).toEqual(["png", 50, 25]);
    const both = await sharp(Buffer.from(await bytesOf(await data(png.resourceURI, "width=30&height=30")))).metadata();
    expect([both.width, both.height]).toEqual([30, 30]);
    const thumb = await data(png.resourceURI, "preset=thumb");
    expect(thumb.headers.get("content-type")).toBe("image/webp");
    expect((await sharp(Buffer.from(await bytesOf(thumb))).metadata()).width).toBe(16);
  });

  it("format=auto follows Accept and says Vary: Accept", async () => {
    const webp = await data(png.resourceURI, "width=10&format=auto", { accept: "image/webp,*/*" });
    expect(webp.headers.get("content-type")).toBe("image/webp");
    expect(webp.headers.get("vary")).toMatch(/\bAccept\b/);
    await webp.arrayBuffer();
    const plain = await data(png.resourceURI, "width=10", { accept: "*/*" });
    expect(plain.headers.get("content-type")).toBe("image/png");
    await plain.arrayBuffer();
  });

  it("a derivative is content of its own: strong ETag, Repr-Digest, 304, Range, HEAD; made once", async () => {
    const first = await data(png.resourceURI, "width=40&format=png");
    const bytes = await bytesOf(first);
    const digest = sha256(bytes);
    expect(first.headers.get("etag")).toBe(`"${digest}"`);
    expect(first.headers.get("repr-digest")).toBe(`sha-256=:${Buffer.from(digest, "hex").toString("base64")}:`);
    expect(first.headers.get("content-length")).toBe(String(bytes.length));
    const again = await data(png.resourceURI, "format=png&width=40");
    expect(sha256(await bytesOf(again))).toBe(digest);
    const notModified = await data(png.resourceURI, "width=40&format=png", { "if-none-match": `"${digest}"` });
    expect(notModified.status).toBe(304);
    const range = await data(png.resourceURI, "width=40&format=png", { range: "bytes=0-9" });
    expect(range.status).toBe(206);
    expect(await bytesOf(range)).toEqual(bytes.slice(0, 10));
    const head = await data(png.resourceURI, "width=40&format=png", {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
    // Stored once in the blob store, under img/, beside (not among) the content.
    const stored = await readdir(join(t.app.volume, "img"), { recursive: true });
    expect(stored.filter((name) => name.endsWith("w40-h0-inside-q0.png"))).toHaveLength(1);
  });

  it("a versioned derivative is immutable", async () => {
    const res = await data(png.resourceURI, `v=${png.sha256}&width=12`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/immutable/);
    await res.arrayBuffer();
  });

  it("a signed link's holder may ask for presets only (403 naming any other image parameter); a forged link is 403", async () => {
    const made = await t.cms.post("createDataLink", { resourceURI: png.resourceURI, expiresIn: 60 });
    expect(made.status).toBe(200);
    const link = new URL(((await made.json()) as { url: string }).url);
    const signed = (extra: string) => t.app.fetch(t.app.url(`${link.pathname}${link.search}${extra}`));
    const res = await signed("&preset=thumb");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/);
    expect((await sharp(Buffer.from(await bytesOf(res))).metadata()).width).toBe(16);
    await expectProblem(await signed("&width=8&format=png"), 403, "FORBIDDEN", "/query/width");
    await expectProblem(await signed("&preset=thumb&format=avif"), 403, "FORBIDDEN", "/query/format");
    const forged = await t.app.fetch(
      t.app.url(`${link.pathname}${link.search.replace(/signature=[^&]+/, "signature=AAAA")}&preset=thumb`),
    );
    await expectProblem(forged, 403, "FORBIDDEN");
  });

  it("bad parameters are 400s naming them", async () => {
    await expectProblem(await data(png.resourceURI, "width=0"), 400, "VALIDATION_FAILED", "/query/width");
    await expectProblem(await data(png.resourceURI, "width=6001"), 400, "VALIDATION_FAILED", "/query/width");
    await expectProblem(await data(png.resourceURI, "fit=squash"), 400, "VALIDATION_FAILED", "/query/fit");
    await expectProblem(await data(png.resourceURI, "preset=nope"), 400, "VALIDATION_FAILED", "/query/preset");
  });

  it("a decompression bomb is refused from its header, in milliseconds (422 IMAGE_TOO_LARGE)", async () => {
    const bomb = await t.cms.create({ resourceName: "bomb.png", resourceMediaType: "image/png" }, bombPng());
    const started = performance.now();
    const res = await data(bomb.resourceURI, "width=100");
    const elapsed = performance.now() - started;
    await expectProblem(res, 422, "IMAGE_TOO_LARGE");
    expect(elapsed).toBeLessThan(1000); // generous under the shared load; decoding would take far longer
  });

  it("SVG, non-images and corrupt images are 422 NOT_TRANSFORMABLE, never 500", async () => {
    const svg = await t.cms.create(
      { resourceName: "logo.svg", resourceMediaType: "image/svg+xml" },
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>',
    );
    await expectProblem(await data(svg.resourceURI, "width=5"), 422, "NOT_TRANSFORMABLE");
    // An SVG labelled as PNG is caught from its header.
    const disguised = await t.cms.create(
      { resourceName: "logo.png", resourceMediaType: "image/png" },
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>',
    );
    await expectProblem(await data(disguised.resourceURI, "width=5"), 422, "NOT_TRANSFORMABLE");
    const text = await t.cms.create({ resourceName: "a.txt", resourceMediaType: "text/plain" }, "hello");
    await expectProblem(await data(text.resourceURI, "width=5"), 422, "NOT_TRANSFORMABLE");
    const good = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#33c" } })
      .jpeg()
      .toBuffer();
    const corrupt = Buffer.concat([good.subarray(0, 200), Buffer.alloc(300, 0x55)]);
    const broken = await t.cms.create({ resourceName: "broken.jpg", resourceMediaType: "image/jpeg" }, corrupt);
    await expectProblem(await data(broken.resourceURI, "width=5"), 422, "NOT_TRANSFORMABLE");
    // Plain getData of the same content is unchanged.
    expect((await data(broken.resourceURI, "")).status).toBe(200);
    // An empty one, labelled an image (uploadResource takes an empty file; createResource does not).
    const form = new FormData();
    form.set("resourceAuthor", "a");
    form.set("resourceMediaType", "image/png");
    form.set("resourceName", "empty.png");
    form.set("resourceTenantId", "images");
    form.set("file", new Blob([], { type: "image/png" }), "empty.png");
    const uploaded = await t.app.fetch(t.app.url(`${API}/uploadResource`), { method: "POST", body: form });
    expect(uploaded.status, await uploaded.clone().text()).toBe(201);
    const empty = (await uploaded.json()) as ResourceDto;
    await expectProblem(await data(empty.resourceURI, "width=5"), 422, "NOT_TRANSFORMABLE");
  });

  it("the OpenAPI document describes the image parameters and refusals of getData", async () => {
    const doc = (await (await t.app.fetch(t.app.url("/openapi.json"))).json()) as {
      paths: Record<string, { get: { parameters: { name: string }[]; responses: Record<string, unknown> } }>;
    };
    const getData = doc.paths[`${API}/getData/{context}/{path}`]!.get;
    const names = getData.parameters.map((p) => p.name);
    for (const name of ["width", "height", "fit", "format", "quality", "enlarge", "preset", "v"])
      expect(names).toContain(name);
    for (const status of ["400", "422", "501", "503"]) expect(getData.responses).toHaveProperty(status);
  });

  it("purging the source removes its derivatives", async () => {
    const bytes = await sharp({ create: { width: 30, height: 30, channels: 3, background: "#999" } })
      .png()
      .toBuffer();
    const gone = await t.cms.create({ resourceName: "gone.png", resourceMediaType: "image/png" }, bytes);
    await (await data(gone.resourceURI, "width=7")).arrayBuffer();
    const derivatives = async () =>
      (await readdir(join(t.app.volume, "img"), { recursive: true })).filter((n) => n.includes("w7-h0"));
    expect(await derivatives()).toHaveLength(1);
    expect((await t.cms.post("purgeResource", { resourceUID: gone.resourceUID })).status).toBe(200);
    expect(await derivatives()).toHaveLength(0);
  });
});

describe("a source in another colour space", () => {
  const t = useCmsApp("images-p3");

  it("is converted to sRGB before its profile is stripped: the colours stay the same", async () => {
    // sRGB (200, 100, 50) written as Display P3 (the pixel values change, the profile says how).
    const p3 = await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 100, b: 50 } } })
      .withIccProfile("p3")
      .png()
      .toBuffer();
    const stored = await sharp(p3, { ignoreIcc: true }).raw().toBuffer();
    // Without the conversion the derivative would keep these values and lose the profile that explains them.
    expect(Math.max(...[200, 100, 50].map((v, i) => Math.abs(stored[i]! - v)))).toBeGreaterThan(8);
    const made = await t.cms.create({ resourceName: "p3.png", resourceMediaType: "image/png" }, p3);
    const res = await t.app.fetch(t.app.url(`${API}/getData/${made.resourceURI}?width=4&format=png`));
    expect(res.status).toBe(200);
    const out = sharp(Buffer.from(await res.arrayBuffer()));
    expect((await out.metadata()).icc).toBeUndefined();
    const pixel = await out.raw().toBuffer();
    for (const [i, v] of [200, 100, 50].entries()) expect(Math.abs(pixel[i]! - v)).toBeLessThanOrEqual(3);
  });
});

describe("CMS_IMAGE_MAX_PIXELS bounds the output too", () => {
  const t = useCmsApp("images-out", { CMS_IMAGE_MAX_PIXELS: "4000000" });

  it("an enlarged derivative over it is 422 IMAGE_TOO_LARGE naming width and height; within it, made", async () => {
    const png = await t.cms.create(
      { resourceName: "small.png", resourceMediaType: "image/png" },
      await sharp({ create: { width: 64, height: 48, channels: 3, background: "#36c" } })
        .png()
        .toBuffer(),
    );
    const get = (query: string) => t.app.fetch(t.app.url(`${API}/getData/${png.resourceURI}?${query}`));
    const over = await get("width=4000&height=4000&fit=fill&format=png&enlarge=true");
    await expectProblem(over, 422, "IMAGE_TOO_LARGE", "/query/width");
    // Width alone: its height follows the aspect ratio (2400 × 1800 = 4.32 MP > 4 MP).
    await expectProblem(await get("width=2400&enlarge=true&format=png"), 422, "IMAGE_TOO_LARGE", "/query/width");
    const within = await get("width=1600&enlarge=true&format=png");
    expect(within.status).toBe(200);
    expect((await sharp(Buffer.from(await bytesOf(within))).metadata()).width).toBe(1600);
    // An output refusal is not the source's: the source still transforms.
    expect((await get("width=32&format=png")).status).toBe(200);
  });
});

describe("CMS_IMAGE_PRESETS_ONLY=true", () => {
  const t = useCmsApp("images-presets", {
    CMS_IMAGE_PRESETS_ONLY: "true",
    CMS_IMAGE_PRESETS: JSON.stringify({ thumb: { width: 12, height: 12, fit: "cover", format: "webp" } }),
  });

  it("serves presets, and refuses any other image parameter with a 400 naming it, before and after a derivative is stored", async () => {
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#36c" } })
      .png()
      .toBuffer();
    const made = await t.cms.create({ resourceName: "p.png", resourceMediaType: "image/png" }, png);
    const data = (query: string) => t.app.fetch(t.app.url(`${API}/getData/${made.resourceURI}?${query}`));
    for (let i = 0; i < 2; i++) {
      const thumb = await data("preset=thumb"); // the second one: stored, answered by the fast path
      expect(thumb.status).toBe(200);
      expect(thumb.headers.get("content-type")).toBe("image/webp");
      expect((await sharp(Buffer.from(await thumb.arrayBuffer())).metadata()).width).toBe(12);
      await expectProblem(await data("width=12"), 400, "VALIDATION_FAILED", "/query/width");
      await expectProblem(await data("width=12&height=12&fit=cover&format=webp"), 400, "VALIDATION_FAILED");
    }
  });
});

describe("derivatives and quotas", () => {
  const t = useCmsApp("images-quota", { CMS_QUOTA_BYTES: "1500" });

  it("are never counted toward the tenant's quota, even past its limit", async () => {
    const png = await sharp({ create: { width: 200, height: 120, channels: 3, background: "#c63" } })
      .png()
      .toBuffer();
    expect(png.byteLength).toBeLessThan(1500);
    const made = await t.cms.create({ resourceName: "q.png", resourceMediaType: "image/png" }, png);
    const usage = async () =>
      ((await (await t.cms.get("usage?resourceTenantId=images-quota")).json()) as { bytes: number }).bytes;
    expect(await usage()).toBe(png.byteLength);
    let derived = 0;
    for (const width of [150, 160, 170, 180]) {
      const res = await t.app.fetch(t.app.url(`${API}/getData/${made.resourceURI}?width=${width}&format=png`));
      expect(res.status).toBe(200);
      derived += (await res.arrayBuffer()).byteLength;
    }
    expect(png.byteLength + derived).toBeGreaterThan(1500); // they would not have fitted
    expect(await usage()).toBe(png.byteLength);
  });
});
