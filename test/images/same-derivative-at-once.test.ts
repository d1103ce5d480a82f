/**
 * Many clients asking at once for the same derivative not made yet (a new image on a busy page):
 * it is made once, and every one of them gets it. An instance served over a real socket with one
 * transform slot (CMS_IMAGE_CONCURRENCY=1, so at most 4 more wait), real sharp, a real libSQL file;
 * transforms are counted by wrapping the app's own transformer (the real one still runs).
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, cmsClient, type ResourceDto } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let photo: ResourceDto;
let transforms = 0;

beforeAll(async () => {
  app = await startTestApp({ CMS_IMAGE_CONCURRENCY: "1" });
  const transformer = app.deps.images!;
  const real = transformer.transform.bind(transformer);
  transformer.transform = (...args) => (transforms++, real(...args));
  const jpeg = await sharp({ create: { width: 1200, height: 800, channels: 3, background: "#5a8" } })
    .jpeg()
    .toBuffer();
  photo = await cmsClient(app, "herd").create({ resourceName: "new.jpg", resourceMediaType: "image/jpeg" }, jpeg);
});
afterAll(() => app.close());

describe("the same new derivative asked for by many at once", () => {
  it("is made once, and all 16 get it: 200, the same bytes and ETag, never a 503", async () => {
    const url = app.url(`${API}/getData/${photo.resourceURI}?width=320&format=webp`);
    const answers = await Promise.all(
      Array.from({ length: 16 }, async () => {
        const res = await app.fetch(url);
        return { status: res.status, etag: res.headers.get("etag"), bytes: Buffer.from(await res.arrayBuffer()) };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(new Set(answers.map((a) => a.etag)).size).toBe(1);
    expect(new Set(answers.map((a) => a.bytes.toString("base64"))).size).toBe(1);
    expect((await sharp(answers[0]!.bytes).metadata()).width).toBe(320);
    expect(transforms).toBe(1);
    const files = (await readdir(join(app.volume, "img"), { recursive: true })).filter((n) => n.endsWith(".webp"));
    expect(files).toHaveLength(1);
    expect(app.unhandledErrors()).toEqual([]);
  });

  it("a failed make is shared too; a refused source (422) is remembered: the next request transforms nothing", async () => {
    const png = await cmsClient(app, "herd").create(
      { resourceName: "broken.png", resourceMediaType: "image/png" },
      "not a png at all",
    );
    transforms = 0;
    const url = app.url(`${API}/getData/${png.resourceURI}?width=10`);
    const answers = await Promise.all(Array.from({ length: 8 }, () => app.fetch(url)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 422));
    expect(transforms).toBe(1);
    // Issue 41: a source's refusal is its content's, so a repeat (any parameters) costs a lookup.
    expect((await app.fetch(url)).status).toBe(422);
    expect((await app.fetch(app.url(`${API}/getData/${png.resourceURI}?width=11`))).status).toBe(422);
    expect(transforms).toBe(1);
  });
});
