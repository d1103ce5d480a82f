/**
 * Image derivatives of sources in S3 (issue 30): the s3 driver against a real S3-compatible server
 * (s3rver on 127.0.0.1, test/helpers/s3-server.ts) and sharp. sharp gathers a stream input into one
 * fresh Buffer, so a source from S3 is read into one of the bounded reused buffers when it fits
 * (runtime/host/source-buffers.ts), else written to a temp file as it arrives: shown by the spool
 * file's size while the source is still being read. Either way a bomb is refused after its first bytes.
 * The driver is the real one; a pass-through only counts the bytes read from it.
 */
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createImageDerivatives, DEFAULT_DERIVATIVE_SETTINGS } from "../../src/images/derivatives.js";
import { parseImageQuery } from "../../src/images/params.js";
import { ImageError } from "../../src/images/errors.js";
import { createSharpImages } from "../../src/runtime/host/sharp-images.js";
import type { BlobKey, BlobStore } from "../../src/storage/blob-store.js";
import { createS3BlobStore } from "../../src/storage/drivers/s3.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { S3RVER_ACCESS_KEY_ID, type S3TestServer, startS3Server } from "../helpers/s3-server.js";
import { bombPng } from "./bomb.js";
import { spooledDuring } from "./spool-watch.js";

let s3: S3TestServer;
let spoolDir: string;
let store: BlobStore;
/** Per read source key: bytes read so far, and a hook called after each chunk. */
const reads = new Map<string, number>();
let onChunk: (key: string, read: number) => Promise<void> = async () => {};

beforeAll(async () => {
  [s3, spoolDir] = await Promise.all([startS3Server(), mkdtemp(join(tmpdir(), "cms-spool-"))]);
  store = createS3BlobStore({
    endpoint: s3.endpoint,
    bucket: s3.bucket,
    accessKeyId: S3RVER_ACCESS_KEY_ID,
    secretAccessKey: "S3RVER",
  });
}, 60_000);
afterAll(async () => {
  await s3?.close();
  await rm(spoolDir, { recursive: true, force: true });
});

/** The S3 store (a class: its methods stay bound to it), each body it returns counted as it is read. */
const counted = (): BlobStore => {
  const get: BlobStore["get"] = async (key, range) => {
    const blob = await store.get(key, range);
    if (!blob) return blob;
    reads.set(key, 0);
    const count = new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        const read = (reads.get(key) ?? 0) + chunk.length;
        reads.set(key, read);
        await onChunk(key, read);
        controller.enqueue(chunk);
      },
    });
    return { ...blob, bytes: undefined, body: blob.body.pipeThrough(count) };
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === "get") return get;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
};

async function source(name: string, bytes: Uint8Array) {
  const key = parseBlobKey(`t/${"a".repeat(32)}/ab/cd/${name.padEnd(64, "0")}`) as BlobKey;
  const info = await store.put(key, new Blob([new Uint8Array(bytes)]).stream());
  return { blobKey: key, size: info.size, sha256: info.sha256, mediaType: "image/png", name, updatedAt: 0 };
}

/** Sources up to `bufferBytes` are read into a buffer, larger ones spooled. */
const images = (bufferBytes = 8 * 1024 * 1024) =>
  createImageDerivatives({
    blobs: counted(),
    transformer: createSharpImages({
      maxPixels: 50_000_000,
      timeoutSeconds: 30,
      spoolDir,
      buffers: { count: 1, bytes: bufferBytes },
    }),
    settings: DEFAULT_DERIVATIVE_SETTINGS,
  });
const spooled = async () => {
  let bytes = 0;
  for (const name of await readdir(spoolDir)) bytes += (await stat(join(spoolDir, name))).size;
  return bytes;
};

describe("image sources in S3", () => {
  it("a source larger than the buffers goes to disk as it is read (never gathered in memory), then is removed", async () => {
    // 1000 × 1000 of noise: a PNG of ~3 MB that compresses to nothing.
    const raw = randomBytes(1000 * 1000 * 3);
    const png = await sharp(raw, { raw: { width: 1000, height: 1000, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    const facts = await source("noise", png);
    let seen: { read: number; spooled: number } | undefined;
    onChunk = async (key, read) => {
      if (key === facts.blobKey && !seen && read >= facts.size * 0.75) seen = { read, spooled: await spooled() };
    };
    const request = parseImageQuery((n) => ({ width: "100", format: "png" })[n], DEFAULT_DERIVATIVE_SETTINGS)!;
    const made = await images(1024 * 1024).derive(facts, request, "");
    expect(reads.get(facts.blobKey)).toBe(facts.size);
    // Three quarters read, and all but the chunks in flight already on disk.
    expect(seen!.spooled).toBeGreaterThan(facts.size * 0.5);
    const derivative = await store.get(made.facts.blobKey as BlobKey);
    const meta = await sharp(Buffer.from(await new Response(derivative!.body).arrayBuffer())).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 100, 100]);
    await expect.poll(() => readdir(spoolDir)).toEqual([]);
  }, 60_000);

  it("a small source is read into a buffer: no temp file", async () => {
    // Blue above, noise below: 300 KB, read in several chunks.
    const noise = await sharp(randomBytes(300 * 300 * 3), { raw: { width: 300, height: 300, channels: 3 } })
      .png({ compressionLevel: 1 })
      .toBuffer();
    const png = await sharp({ create: { width: 300, height: 400, channels: 3, background: "#33c" } })
      .composite([{ input: noise, top: 100, left: 0 }])
      .png({ compressionLevel: 1 })
      .toBuffer();
    const facts = await source("small", png);
    let filesMidway = -1;
    onChunk = async (key, read) => {
      if (key === facts.blobKey && filesMidway < 0 && read >= facts.size / 2)
        filesMidway = (await readdir(spoolDir)).length;
    };
    const request = parseImageQuery((n) => ({ width: "30", format: "png" })[n], DEFAULT_DERIVATIVE_SETTINGS)!;
    const made = await images().derive(facts, request, "");
    expect(reads.get(facts.blobKey)).toBe(facts.size);
    expect(facts.size).toBeGreaterThan(250_000);
    expect(filesMidway).toBe(0);
    expect(await readdir(spoolDir)).toEqual([]);
    const derivative = await store.get(made.facts.blobKey as BlobKey);
    const { data } = await sharp(Buffer.from(await new Response(derivative!.body).arrayBuffer()))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect([...data.subarray(0, 3)]).toEqual([0x33, 0x33, 0xcc]);
  }, 60_000);

  it.each([
    ["read into a buffer", 8 * 1024 * 1024],
    ["spooled", 1024 * 1024],
  ])(
    "a bomb (%s) is refused from its first bytes: the rest of the source is never downloaded",
    async (_, bufferBytes) => {
      onChunk = async () => {};
      // The bomb's header, then 4 MiB more (a real bomb's IDAT would be longer still).
      const facts = await source(`bomb${bufferBytes}`, Buffer.concat([bombPng(), Buffer.alloc(4 * 1024 * 1024)]));
      const request = parseImageQuery((n) => ({ width: "100" })[n], DEFAULT_DERIVATIVE_SETTINGS)!;
      const { result: refused, created } = await spooledDuring(spoolDir, () =>
        images(bufferBytes)
          .derive(facts, request, "")
          .catch((err: unknown) => err),
      );
      expect(created > 0).toBe(bufferBytes < facts.size); // which way it went: a temp file or none
      expect(refused).toBeInstanceOf(ImageError);
      expect((refused as ImageError).code).toBe("IMAGE_TOO_LARGE");
      expect(reads.get(facts.blobKey)).toBeLessThan(1024 * 1024);
      expect(await readdir(spoolDir)).toEqual([]);
    },
    60_000,
  );
});
