/**
 * Issue 41: a signed link's holder flooding the transform slots with big presets leaves room for a
 * user's thumbnail, which runs next rather than getting 503. A real server on 127.0.0.1 with one
 * transform slot (CMS_IMAGE_CONCURRENCY=1: four of a caller's may wait), real sharp, real
 * concurrent requests; the app's own transformer is wrapped only to hold the link holder's first
 * transform until the user's request is waiting (the real transform then runs).
 */
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, cmsClient, type ResourceDto } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const PRESETS = Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`big${n}`, { width: 200 + n, format: "png" }]));

let app: TestApp;
let big: ResourceDto;
let small: ResourceDto;
const started: string[] = [];
let entered!: () => void;
const holding = new Promise<void>((resolve) => (entered = resolve));
let thumbLookups = 0;
let thumbLooked!: () => void;
const looked = new Promise<void>((resolve) => (thumbLooked = resolve));
let release!: () => void;
const released = new Promise<void>((resolve) => (release = resolve));

beforeAll(async () => {
  app = await startTestApp({
    CMS_IMAGE_CONCURRENCY: "1",
    CMS_IMAGE_PRESETS: JSON.stringify(PRESETS),
    CMS_PUBLIC_URL: "https://cms.example.org", // links are built on it; only their path is fetched here
  });
  const transformer = app.deps.images!;
  const real = transformer.transform.bind(transformer);
  transformer.transform = async (source, request, formatFor) => {
    started.push(String(request.width));
    if (started.length === 1) {
      entered();
      await released;
    }
    return real(source, request, formatFor);
  };
  // The thumbnail's request has looked for its derivative (not stored) and is about to ask for a slot.
  const blobs = app.deps.blobs;
  const head = blobs.head.bind(blobs);
  blobs.head = async (key) => {
    const found = await head(key);
    // The fast path's lookup, then the route's: after the second, it asks for a slot in the same turn.
    if (key.includes("/w32-") && ++thumbLookups === 2) thumbLooked();
    return found;
  };
  const cms = cmsClient(app, "fair");
  const png = (size: number) =>
    sharp({ create: { width: size, height: size, channels: 3, background: "#468" } })
      .png()
      .toBuffer();
  big = await cms.create({ resourceName: "big.png", resourceMediaType: "image/png" }, await png(400));
  small = await cms.create({ resourceName: "small.png", resourceMediaType: "image/png" }, await png(100));
});
afterAll(() => app.close());

describe("transform slots under a signed link's flood", () => {
  it("a user's thumbnail waits its fair turn (200, next to run), never a 503", async () => {
    const made = await cmsClient(app, "fair").post("createDataLink", { resourceURI: big.resourceURI, expiresIn: 60 });
    const link = new URL(((await made.json()) as { url: string }).url);
    const flood = [1, 2, 3, 4, 5, 6].map((n) =>
      app.fetch(app.url(`${link.pathname}${link.search}&preset=big${n}`)).then(async (res) => {
        await res.arrayBuffer();
        return res.status;
      }),
    );
    await holding;
    // One runs (held), four wait: the sixth is refused at once, past the link's own share.
    expect(await Promise.race(flood)).toBe(503);
    const thumb = app.fetch(app.url(`${API}/getData/${small.resourceURI}?width=32&format=png`));
    // Its lookup done, its slot is asked for in the same turn: after this it waits (or, before, got 503).
    await looked;
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const res = await thumb;
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(32);
    const statuses = await Promise.all(flood);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(started[1]).toBe("32"); // the user's ran next, before the link's four waiting
  });
});
