/**
 * Image derivatives of sources on the fs driver (issue 30): a blob file starts with the driver's
 * header, so libvips cannot read it as it is. Its bytes after the header are copied file to file
 * for libvips (on Bun with Bun.write's native copy), never read through a Web stream: on Bun that
 * stream was 20–55 ms of a 12 MP JPEG's first 320 px WebP. Real fs driver in a temp folder, real sharp.
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createImageDerivatives, DEFAULT_DERIVATIVE_SETTINGS } from "../../src/images/derivatives.js";
import { parseImageQuery } from "../../src/images/params.js";
import { createSharpImages } from "../../src/runtime/host/sharp-images.js";
import type { BlobKey, BlobStore } from "../../src/storage/blob-store.js";
import { createFsBlobStore, type FsBlobStore } from "../../src/storage/drivers/fs.js";
import { parseBlobKey } from "../../src/storage/keys.js";

let dir: string;
let spoolDir: string;
let store: FsBlobStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-fs-source-"));
  spoolDir = join(dir, "spool");
  await mkdir(spoolDir);
  store = await createFsBlobStore({ root: join(dir, "volume") });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("image sources on the fs driver", () => {
  it("reach libvips as a copy of the blob file's bytes, never through a stream read", async () => {
    const jpeg = await sharp({ create: { width: 60, height: 40, channels: 3, background: "#c33" } })
      .jpeg()
      .toBuffer();
    const key = parseBlobKey(`t/${"a".repeat(32)}/ab/cd/${"b".repeat(64)}`) as BlobKey;
    const info = await store.put(key, new Blob([new Uint8Array(jpeg)]).stream());
    const facts = {
      blobKey: key,
      size: info.size,
      sha256: info.sha256,
      mediaType: "image/jpeg",
      name: "p.jpg",
      updatedAt: 0,
    };
    let streamed = 0;
    // The real store; only `get` (a stream of the blob) is counted.
    const blobs = new Proxy(store as BlobStore, {
      get(target, prop) {
        if (prop === "get") return (...args: Parameters<BlobStore["get"]>) => (streamed++, target.get(...args));
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const images = createImageDerivatives({
      blobs,
      transformer: createSharpImages({ maxPixels: 50_000_000, timeoutSeconds: 30, spoolDir }),
      settings: DEFAULT_DERIVATIVE_SETTINGS,
    });
    const request = parseImageQuery((n) => ({ width: "30", format: "webp" })[n], DEFAULT_DERIVATIVE_SETTINGS)!;
    const made = await images.derive(facts, request, "");
    expect(streamed).toBe(0);
    const derivative = await store.get(made.facts.blobKey as BlobKey);
    const meta = await sharp(Buffer.from(await new Response(derivative!.body).arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 30, 20]);
    await expect.poll(() => readdir(spoolDir)).toEqual([]);
  });
});
