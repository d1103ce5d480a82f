/** A decompression bomb for the image tests: a tiny PNG whose header declares 20 000 × 20 000 pixels. */
import { crc32, deflateSync } from "node:zlib";

/** A PNG chunk: length, type, data, CRC of type + data. */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A few hundred bytes declaring 20 000 × 20 000 RGBA pixels (1.6 GB decoded): a decompression bomb. */
export function bombPng(): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(20_000, 0);
  ihdr.writeUInt32BE(20_000, 4);
  ihdr.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, deflate, no filter, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(1024))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * An AVIF whose `ispe` box claims `claimed` (64×48) while its AV1 frame is `real` × `real`: made
 * by sharp, then the claim patched in. libvips' pixel limit reads the claim; the decoder, the frame.
 */
export async function lyingAvif(real: number, claimed = { width: 64, height: 48 }): Promise<Buffer> {
  const { default: sharp } = await import("sharp");
  const avif = await sharp({ create: { width: real, height: real, channels: 3, background: "#8ac" } })
    .avif({ effort: 0, quality: 30 })
    .toBuffer();
  const ispe = avif.indexOf("ispe", 0, "latin1");
  if (ispe < 0 || avif.readUInt32BE(ispe + 8) !== real) throw new Error("no ispe box of the real size");
  avif.writeUInt32BE(claimed.width, ispe + 8);
  avif.writeUInt32BE(claimed.height, ispe + 12);
  return avif;
}
