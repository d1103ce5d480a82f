/**
 * Image parameters on the Worker (issue 30) inside workerd. With an Images binding
 * (vitest.workers.config.ts binds Miniflare's local one, which runs sharp in the pool's Node
 * process) the Worker transforms through it and stores the derivative like Node and Bun; without
 * one a transform request is 501 TRANSFORM_UNAVAILABLE and plain getData is unchanged.
 *
 * What Miniflare's local binding cannot show (so these tests do not claim it): it resizes every
 * request with sharp's `contain` whatever `fit` says, ignores `quality`, and does not apply EXIF
 * orientation; Cloudflare's own service does all three. The `fit` mapping is therefore checked on
 * the options handed to the binding (recorded on the way through, the real binding still runs).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";
import {
  type BindingTransform,
  bindingTransform,
  type ImagesBindingLike,
} from "../../src/runtime/worker/cloudflare-images.js";
import { binaryCreate } from "../helpers/binary-create.js";

beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

/** A 60×40 PNG (one colour), made with sharp. */
const PNG_60X40 =
  "iVBORw0KGgoAAAANSUhEUgAAADwAAAAoCAIAAAAt2Q6oAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAPElEQVR42u3OQQkAAAgEsAthHPtjLFP4EAYLsEzXO5GWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlpaWlr5ML1eaQZcnBE1IAAAAAElFTkSuQmCC";
const API = "http://worker.test/cms/v1.0";

type Env = Record<string, unknown>;

async function create(
  app: ReturnType<typeof createWorkerApp>,
  e: Env,
  binary: string,
  mediaType: string,
  name: string,
) {
  const res = await app.fetch(binaryCreate(API, { binary, mediaType, name, tenant: "t" }), e);
  expect(res.status).toBe(201);
  return ((await res.json()) as { resourceURI: string }).resourceURI;
}

/** The binding, its calls counted and each transform's options recorded, the real binding answering. */
function recorded(images: ImagesBindingLike) {
  const transforms: BindingTransform[] = [];
  let inputs = 0;
  const binding: ImagesBindingLike = {
    info: (stream) => images.info(stream),
    input(stream) {
      inputs++;
      const chain = images.input(stream);
      return {
        transform(t) {
          transforms.push(t);
          return chain.transform(t);
        },
        output: (o) => chain.output(o),
      };
    },
  };
  return { binding, transforms, inputs: () => inputs };
}

const pngSize = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  return { width: view.getUint32(16), height: view.getUint32(20) };
};
const ascii = (bytes: Uint8Array, from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));

describe("image parameters on Workers with an Images binding", () => {
  it("transform through the binding; the second request is the stored derivative, same ETag", async () => {
    const images = recorded(env.IMAGES as unknown as ImagesBindingLike);
    const e: Env = { ...env, IMAGES: images.binding };
    const app = createWorkerApp();
    const uri = await create(app, e, PNG_60X40, "image/png", "dot.png");
    expect(images.inputs()).toBe(1); // its thumbhash placeholder (issue 38; test/workers/thumbhash.test.ts)

    const first = await app.fetch(new Request(`${API}/getData/${uri}?width=30&format=png`), e);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await first.arrayBuffer());
    expect(pngSize(bytes)).toEqual({ width: 30, height: 20 });
    expect(images.inputs()).toBe(2);

    const again = await app.fetch(new Request(`${API}/getData/${uri}?width=30&format=png`), e);
    expect(again.status).toBe(200);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);
    expect(images.inputs()).toBe(2); // from the derivative cache, not the binding

    const webp = await app.fetch(new Request(`${API}/getData/${uri}?height=10&format=webp&quality=50`), e);
    expect(webp.status).toBe(200);
    expect(webp.headers.get("content-type")).toBe("image/webp");
    const body = new Uint8Array(await webp.arrayBuffer());
    expect([ascii(body, 0, 4), ascii(body, 8, 12)]).toEqual(["RIFF", "WEBP"]);
    expect(images.transforms).toEqual([
      { width: 100, fit: "contain" }, // the placeholder: the longer side to 100 px
      { width: 30, height: undefined, fit: "contain" },
      { width: undefined, height: 10, fit: "contain" },
    ]);

    const plain = await app.fetch(new Request(`${API}/getData/${uri}`), e);
    expect(new Uint8Array(await plain.arrayBuffer()).length).toBe(atob(PNG_60X40).length);
  });

  it("refuse a corrupt image, one over CMS_IMAGE_MAX_PIXELS and an SVG with 422 problems", async () => {
    const app = createWorkerApp();
    const e: Env = { ...env, CMS_IMAGE_MAX_PIXELS: "2000" };
    const refusal = async (uri: string) => {
      const res = await app.fetch(new Request(`${API}/getData/${uri}?width=10`), e);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      return { status: res.status, code: ((await res.json()) as { code: string }).code };
    };
    const corrupt = await create(app, e, btoa("not a png at all, just text"), "image/png", "bad.png");
    expect(await refusal(corrupt)).toEqual({ status: 422, code: "NOT_TRANSFORMABLE" });
    const large = await create(app, e, PNG_60X40, "image/png", "large.png"); // 2400 pixels
    expect(await refusal(large)).toEqual({ status: 422, code: "IMAGE_TOO_LARGE" });
    const svg = await create(app, e, btoa('<svg xmlns="http://www.w3.org/2000/svg"/>'), "image/svg+xml", "a.svg");
    expect(await refusal(svg)).toEqual({ status: 422, code: "NOT_TRANSFORMABLE" });
  });

  it("ask the binding for sharp's fits in Cloudflare's words", () => {
    const header = { format: "jpeg", width: 400, height: 100 };
    const both = (fit: "cover" | "contain" | "inside" | "outside" | "fill") =>
      bindingTransform({ width: 50, height: 50, fit, format: "webp" }, header);
    expect(both("cover")).toEqual({ width: 50, height: 50, fit: "cover" });
    expect(both("contain")).toEqual({ width: 50, height: 50, fit: "pad" });
    expect(both("inside")).toEqual({ width: 50, height: 50, fit: "contain" });
    expect(both("fill")).toEqual({ width: 50, height: 50, fit: "squeeze" });
    // outside: at least 50×50 with the aspect kept → 200×50
    expect(both("outside")).toEqual({ width: 200, fit: "contain" });
  });

  it("never outgrows the source unless enlarge=true (issue 41)", () => {
    const header = { format: "png", width: 64, height: 48 };
    const fill = { width: 4000, height: 4000, fit: "fill", format: "png" } as const;
    expect(bindingTransform(fill, header)).toEqual({ width: 48, height: 48, fit: "squeeze" });
    expect(bindingTransform({ ...fill, enlarge: true }, header)).toEqual({ width: 4000, height: 4000, fit: "squeeze" });
    expect(bindingTransform({ width: 400, fit: "inside", format: "png" }, header)).toEqual({
      width: 64,
      height: undefined,
      fit: "contain",
    });
    expect(bindingTransform({ width: 400, height: 10, fit: "outside", format: "png" }, header)).toEqual({
      width: 64,
      fit: "contain",
    });
  });
});

describe("image parameters on Workers without an Images binding", () => {
  it("answer 501 TRANSFORM_UNAVAILABLE; plain getData is unchanged", async () => {
    const app = createWorkerApp();
    const e: Env = { ...env, IMAGES: undefined };
    // The content is an image, so only the missing transformer refuses.
    const uri = await create(app, e, PNG_60X40, "image/png", "dot.png");
    const refused = await app.fetch(new Request(`${API}/getData/${uri}?width=10`), e);
    expect(refused.status).toBe(501);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(((await refused.json()) as { code: string }).code).toBe("TRANSFORM_UNAVAILABLE");
    const plain = await app.fetch(new Request(`${API}/getData/${uri}`), e);
    expect(plain.status).toBe(200);
    expect(new Uint8Array(await plain.arrayBuffer()).length).toBe(atob(PNG_60X40).length);
  });
});
