/**
 * The ingest-time header reader (src/images/image-header.ts) on real files sharp makes here, in
 * every format it reads, fed in chunks as small as one byte (a header split anywhere), and on what
 * has no dimensions.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { ImageHeaderReader, readImageDimensions } from "../../src/images/image-header.js";

const solid = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: { r: 40, g: 90, b: 200, alpha: 0.5 } } });

/** Feeds `bytes` to a reader in chunks of `size` bytes. */
function read(bytes: Uint8Array, size = bytes.length) {
  const reader = new ImageHeaderReader();
  for (let at = 0; at < bytes.length; at += size) reader.push(bytes.subarray(at, at + size));
  return reader.dimensions();
}

describe("image dimensions from the header", () => {
  it("reads PNG, GIF, WebP (lossy, lossless, extended), AVIF and JPEG, in any chunking", async () => {
    const files: [string, Buffer][] = [
      ["png", await solid(301, 17).png().toBuffer()],
      ["gif", await solid(33, 301).gif().toBuffer()],
      ["webp lossy", await solid(301, 17).webp().toBuffer()],
      ["webp lossless", await solid(17, 301).webp({ lossless: true }).toBuffer()],
      ["webp extended", await solid(301, 17, 4).webp().withMetadata().toBuffer()],
      ["avif", await solid(301, 17).avif({ effort: 0 }).toBuffer()],
      ["jpeg", await solid(301, 17).jpeg().toBuffer()],
    ];
    for (const [name, bytes] of files) {
      const expected = await sharp(bytes).metadata();
      for (const size of [1, 7, bytes.length]) {
        expect(read(bytes, size), `${name} in chunks of ${size}`).toEqual({
          width: expected.width,
          height: expected.height,
        });
      }
    }
  });

  it("a JPEG's frame header is found past a large EXIF block; orientation 5–8 swaps width and height", async () => {
    // Two 60 000-byte application segments after SOI put the frame header past the first 64 KiB.
    const plain = await solid(40, 30).jpeg().toBuffer();
    const segment = (marker: number) => {
      const length = Buffer.alloc(4);
      length.set([0xff, marker]);
      length.writeUInt16BE(60_002, 2);
      return Buffer.concat([length, Buffer.alloc(60_000, 0x20)]);
    };
    const padded = Buffer.concat([plain.subarray(0, 2), segment(0xe2), segment(0xe3), plain.subarray(2)]);
    expect(padded.indexOf(Buffer.from([0xff, 0xc0]))).toBeGreaterThan(64 * 1024);
    expect((await sharp(padded).metadata()).width).toBe(40); // still a valid JPEG
    expect(read(padded, 4096)).toEqual({ width: 40, height: 30 });
    const turned = await solid(40, 30).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(read(turned, 5)).toEqual({ width: 30, height: 40 });
    const flipped = await solid(40, 30).jpeg().withMetadata({ orientation: 2 }).toBuffer();
    expect(read(flipped)).toEqual({ width: 40, height: 30 });
  });

  it("SVG, text, an empty body and a truncated header have none", async () => {
    const png = await solid(10, 10).png().toBuffer();
    for (const bytes of [
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'),
      Buffer.from("hello, world"),
      Buffer.alloc(0),
      png.subarray(0, 20),
      Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]), // a scan before any frame header
    ]) {
      expect(read(bytes, 3)).toBeUndefined();
    }
  });

  it("passes the stream through unchanged", async () => {
    const png = await solid(12, 34).png().toBuffer();
    const { body, dimensions } = readImageDimensions(new Blob([new Uint8Array(png)]).stream());
    expect(Buffer.from(await new Response(body).arrayBuffer())).toEqual(png);
    expect(dimensions()).toEqual({ width: 12, height: 34 });
  });
});
