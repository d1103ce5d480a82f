/**
 * Issue 38 on Workers: an image's thumbhash placeholder is computed at ingest there too, on every
 * way in (createResource, uploadResource, tus), through the Images binding: it shrinks the image
 * outside the isolate to at most 100 × 100 and answers a PNG, which src/images/png-pixels.ts reads.
 * vitest.workers.config.ts binds Miniflare's local binding, which runs sharp as Node does, so the
 * hashes equal Node's exactly (test/helpers/thumbhash-images.ts; Cloudflare's own resampler may
 * differ in the last bits, which moves a hash only slightly).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { decodePng, PngRefused } from "../../src/images/png-pixels.js";
import { createWorkerApp } from "../../src/runtime/worker/server.js";
import { binaryCreate } from "../helpers/binary-create.js";
import { bytesOf, GRADIENT_JPEG, GRADIENT_PNG } from "../helpers/thumbhash-images.js";

beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

const API = "http://thumbs.test/cms/v1.0";
type Env = Record<string, unknown>;
type Created = { resourceUID: string; thumbhash?: string };

const app = createWorkerApp();
const call = (path: string, init: RequestInit, e: Env = env) => app.fetch(new Request(`${API}/${path}`, init), e);

async function created(res: Response): Promise<Created> {
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Created;
}

const create = async (binary: string, mediaType: string, name: string, e: Env = env) =>
  created(await app.fetch(binaryCreate(API, { binary, mediaType, name, tenant: "thumbs" }), e));

describe("thumbhash at ingest on Workers with an Images binding", () => {
  it("createResource: a PNG's equals Node's; queryResource answers the stored one", async () => {
    const png = await create(GRADIENT_PNG.base64, "image/png", "g.png");
    expect(png.thumbhash).toBe(GRADIENT_PNG.nodeThumbhash);
    const queried = await call("queryResource", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ queryUID: png.resourceUID }),
    });
    expect(await queried.json()).toMatchObject({ thumbhash: GRADIENT_PNG.nodeThumbhash });
  });

  it("uploadResource: a JPEG's equals Node's", async () => {
    const data = new FormData();
    for (const [k, v] of Object.entries({ resourceAuthor: "a", resourceTenantId: "thumbs", resourceName: "g.jpg" }))
      data.append(k, v);
    data.append("file", new Blob([bytesOf(GRADIENT_JPEG.base64)], { type: "image/jpeg" }), "g.jpg");
    const jpeg = await created(await call("uploadResource", { method: "POST", body: data }));
    expect(jpeg.thumbhash).toBe(GRADIENT_JPEG.nodeThumbhash);
  });

  it("tus: the finished upload's equals Node's", async () => {
    const bytes = bytesOf(GRADIENT_PNG.base64);
    const meta = { resourceTenantId: "thumbs", filename: "g.png", author: "a", filetype: "image/png" };
    const res = await call("uploads", {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": String(bytes.length),
        "upload-metadata": Object.entries(meta)
          .map(([k, v]) => `${k} ${btoa(v)}`)
          .join(","),
        "content-type": "application/offset+octet-stream",
      },
      body: bytes,
    });
    expect((await created(res)).thumbhash).toBe(GRADIENT_PNG.nodeThumbhash);
  });

  it("none for an SVG, a text, or an image the binding cannot decode; each is stored all the same", async () => {
    const svg = await create(
      btoa('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>'),
      "image/svg+xml",
      "a.svg",
    );
    expect(svg).not.toHaveProperty("thumbhash");
    expect(await create(btoa("hello"), "text/plain", "a.txt")).not.toHaveProperty("thumbhash");
    // A valid header (so width and height are known) and no image data after it.
    const header = btoa(String.fromCharCode(...bytesOf(GRADIENT_PNG.base64).subarray(0, 33)));
    const broken = await create(header, "image/png", "broken.png");
    expect(broken).not.toHaveProperty("thumbhash");
    expect(broken).toMatchObject({ width: 20, height: 15 });
  });
});

describe("thumbhash on Workers without an Images binding", () => {
  it("is absent: nothing there decodes images", async () => {
    const png = await create(GRADIENT_PNG.base64, "image/png", "g.png", { ...env, IMAGES: undefined });
    expect(png).not.toHaveProperty("thumbhash");
    expect(png).toMatchObject({ width: 20, height: 15 });
  });
});

/** `png` with its (one) IDAT chunk's data replaced by `edit`'s (CRCs zeroed: the reader checks none). */
function withIdat(png: Uint8Array, edit: (data: Uint8Array) => Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const parts: Uint8Array[] = [png.subarray(0, 8)];
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at);
    const type = png.subarray(at + 4, at + 8);
    let data = png.subarray(at + 8, at + 8 + length);
    if (String.fromCharCode(...type) === "IDAT") data = edit(data);
    const head = new Uint8Array(8);
    new DataView(head.buffer).setUint32(0, data.length);
    head.set(type, 4);
    parts.push(head, data, new Uint8Array(4));
    at += 12 + length;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((n, p) => (out.set(p, n), n + p.length), 0);
  return out;
}

describe("the PNG reader inside workerd (its DecompressionStream)", () => {
  it("reads the fixture, and refuses a cut or garbage deflate stream with a PngRefused, not a hang", async () => {
    const png = bytesOf(GRADIENT_PNG.base64);
    expect(await decodePng(png, 100)).toMatchObject({ width: 20, height: 15 });
    const refusal = (bytes: Uint8Array) =>
      decodePng(bytes, 100).then(
        () => "read",
        (err: unknown) => (err instanceof PngRefused ? err.message : `not a PngRefused: ${err}`),
      );
    const cut = withIdat(png, (d) => Uint8Array.from([...d.subarray(0, d.length / 2), ...d.subarray(-4)]));
    expect(await refusal(cut)).toMatch(/^(corrupt image data|less image data than its size)$/);
    const garbage = withIdat(png, (d) => Uint8Array.from(d, (b, i) => (i < 2 || i >= d.length - 4 ? b : 0xff)));
    expect(await refusal(garbage)).toBe("corrupt image data");
  });
});
