/**
 * Image derivatives of sources on the fs driver (issue 30): a blob file starts with the driver's
 * header, so libvips cannot read it as it is. A source up to the buffers' size is read into a
 * reused buffer and decoded from memory (runtime/host/source-buffers.ts); a larger one, or one
 * arriving while every buffer is in use, is copied past the header to a temp file. Neither is read
 * through a Web stream (on Bun that stream was 20–55 ms of a 12 MP JPEG's first 320 px WebP).
 * Real fs driver in a temp folder, real sharp; temp files are seen with a real fs.watch.
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createImageDerivatives, DEFAULT_DERIVATIVE_SETTINGS } from "../../src/images/derivatives.js";
import { parseImageQuery } from "../../src/images/params.js";
import type { ImageError } from "../../src/images/errors.js";
import { createSharpImages } from "../../src/runtime/host/sharp-images.js";
import type { BlobKey, BlobStore } from "../../src/storage/blob-store.js";
import { createFsBlobStore, type FsBlobStore } from "../../src/storage/drivers/fs.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { spooledDuring } from "./spool-watch.js";

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

let sources = 0;
/** `bytes` stored on the fs driver as a source row of `mediaType`. */
async function source(bytes: Uint8Array, mediaType = "image/png") {
  const key = parseBlobKey(`t/${"a".repeat(32)}/ab/cd/${String(++sources).padStart(64, "0")}`) as BlobKey;
  const info = await store.put(key, new Blob([new Uint8Array(bytes)]).stream());
  return { blobKey: key, size: info.size, sha256: info.sha256, mediaType, name: "p.png", updatedAt: 0 };
}

/** An uncompressed PNG of one colour: the same length for every colour at one size. */
const solid = (background: string, width = 60, height = 40) =>
  sharp({ create: { width, height, channels: 3, background } })
    .png({ compressionLevel: 0 })
    .toBuffer();

/** Derivatives over the real store, every stream read (`get`) counted, sources ≤ `bufferBytes` buffered. */
function derivatives(bufferBytes: number) {
  const reads = { streamed: 0 };
  const blobs = new Proxy(store as BlobStore, {
    get(target, prop) {
      if (prop === "get") return (...args: Parameters<BlobStore["get"]>) => (reads.streamed++, target.get(...args));
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const images = createImageDerivatives({
    blobs,
    transformer: createSharpImages({
      maxPixels: 50_000_000,
      timeoutSeconds: 30,
      spoolDir,
      buffers: { count: 1, bytes: bufferBytes },
    }),
    settings: { ...DEFAULT_DERIVATIVE_SETTINGS, concurrency: 2 }, // two transforms at once, one buffer
  });
  return { images, reads };
}

const png30 = parseImageQuery((n) => ({ width: "30", format: "png" })[n], DEFAULT_DERIVATIVE_SETTINGS)!;

/** The derivative's size and its centre pixel's colour. */
async function made(facts: { blobKey: string }) {
  const blob = await store.get(facts.blobKey as BlobKey);
  const bytes = Buffer.from(await new Response(blob!.body).arrayBuffer());
  const { data, info } = await sharp(bytes).raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * info.channels;
  return { width: info.width, height: info.height, rgb: [...data.subarray(at, at + 3)] };
}

describe("image sources on the fs driver", () => {
  it("a small source is read into a buffer: no stream read, no temp file", async () => {
    const { images, reads } = derivatives(1024 * 1024);
    const facts = await source(await solid("#c33"));
    const { result, created } = await spooledDuring(spoolDir, () => images.derive(facts, png30, ""));
    expect(reads.streamed).toBe(0);
    expect(created).toBe(0);
    expect(await made(result.facts)).toEqual({ width: 30, height: 20, rgb: [0xcc, 0x33, 0x33] });
  });

  it("a larger source is copied past the header to a temp file, removed afterwards", async () => {
    const { images, reads } = derivatives(1024);
    const facts = await source(await solid("#3c3"));
    const { result, created } = await spooledDuring(spoolDir, () => images.derive(facts, png30, ""));
    expect(reads.streamed).toBe(0);
    expect(created).toBeGreaterThan(0);
    expect(await made(result.facts)).toEqual({ width: 30, height: 20, rgb: [0x33, 0xcc, 0x33] });
    await expect.poll(() => readdir(spoolDir)).toEqual([]);
  });

  it("one buffer carries source after source of the same length: each derivative is its own source's", async () => {
    const { images } = derivatives(1024 * 1024);
    const colours = ["#c33", "#33c", "#3c3", "#ccc"];
    const pngs = await Promise.all(colours.map((c) => solid(c)));
    expect(new Set(pngs.map((p) => p.length)).size).toBe(1);
    for (const [i, png] of pngs.entries()) {
      const result = await images.derive(await source(png), png30, "");
      const hex = colours[i]!.slice(1);
      expect((await made(result.facts)).rgb).toEqual([...hex].map((d) => Number.parseInt(d + d, 16)));
    }
  });

  it("a source arriving while the buffer is in use goes through a temp file; both come out right", async () => {
    const { images } = derivatives(1024 * 1024);
    const [red, blue] = await Promise.all([
      source(await solid("#c33", 600, 400)),
      source(await solid("#33c", 600, 400)),
    ]);
    const { result, created } = await spooledDuring(spoolDir, () =>
      Promise.all([images.derive(red, png30, ""), images.derive(blue, png30, "")]),
    );
    expect(created).toBeGreaterThan(0);
    expect((await made(result[0].facts)).rgb).toEqual([0xcc, 0x33, 0x33]);
    expect((await made(result[1].facts)).rgb).toEqual([0x33, 0x33, 0xcc]);
  });

  it.each([
    ["its header (metadata fails)", (png: Buffer) => Buffer.alloc(png.length, 7)],
    [
      "its pixels (the decode fails)",
      (png: Buffer) => Buffer.concat([png.subarray(0, 100), Buffer.alloc(png.length - 100, 7)]),
    ],
  ])("a source corrupt in %s gives its buffer back: the next source is still read into it", async (_, corrupt) => {
    const { images } = derivatives(1024 * 1024);
    const png = await solid("#c33");
    const refused = await images.derive(await source(corrupt(png)), png30, "").catch((err: unknown) => err);
    expect((refused as ImageError).code).toBe("NOT_TRANSFORMABLE");
    const facts = await source(await solid("#33c"));
    const { result, created } = await spooledDuring(spoolDir, () => images.derive(facts, png30, ""));
    expect(created).toBe(0);
    expect((await made(result.facts)).rgb).toEqual([0x33, 0x33, 0xcc]);
  });
});
