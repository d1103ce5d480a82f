/**
 * A small PNG's pixels as RGBA (issue 38: the thumbhash on Workers). The Images binding shrinks an
 * image outside the isolate and answers a PNG of at most 100 × 100; this reads that PNG back with
 * the runtime's own inflater (zip/inflate.ts on DecompressionStream), so the Worker carries no
 * image library. Read: every non-interlaced PNG (grey, grey + alpha, RGB, RGBA, palette; 16 bits a
 * sample keep their high byte) but one with a transparent colour key. Anything else (interlaced, a
 * colour key), any malformed or oversized PNG, is refused with a PngRefused.
 */
import { inflateRaw } from "../zip/inflate.js";

export class PngRefused extends Error {
  override name = "PngRefused";
}

export interface RgbaPixels {
  width: number;
  height: number;
  rgba: Uint8Array;
}

interface Header {
  width: number;
  height: number;
  /** Bits a sample: 1, 2, 4 (grey and palette only), 8 or 16 (not palette). */
  depth: number;
  colourType: number;
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
/** Samples a pixel, by colour type: grey, RGB, palette index, grey + alpha, RGBA. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/**
 * Deflated bytes handed to the inflater at a time; zip/inflate.ts feeds the next only while no
 * output waits, so a bomb is refused after its first slices (16 of them on Node 20), never inflated whole.
 */
const INFLATE_SLICE = 1024;

const refuse = (why: string): never => {
  throw new PngRefused(why);
};

/** The pixels of `png`, whose sides must be at most `maxSide`; a PngRefused for anything else. */
export async function decodePng(png: Uint8Array, maxSide: number): Promise<RgbaPixels> {
  const { header, palette, alpha, zlib } = readChunks(png, maxSide);
  const { width, height, depth, colourType } = header;
  const channels = CHANNELS[colourType]!;
  const rowBytes = Math.ceil((width * channels * depth) / 8);
  const filtered = await inflateZlib(zlib, height * (rowBytes + 1));
  const samples = unfilter(filtered, height, rowBytes, Math.max(1, (channels * depth) >> 3));
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0, to = 0; y < height; y++) {
    for (let x = 0; x < width; x++, to += 4) {
      // Sample k of this pixel: a byte, the high byte of two, or `depth` bits packed from the left.
      const sample = (k: number) => {
        const bit = (x * channels + k) * depth;
        const byte = samples[y * rowBytes + (bit >> 3)]!;
        return depth >= 8 ? byte : (byte >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
      };
      if (colourType === 3) {
        const index = sample(0);
        if (index * 3 + 2 >= palette.length) refuse("a pixel outside the palette");
        rgba.set(palette.subarray(index * 3, index * 3 + 3), to);
        rgba[to + 3] = alpha[index] ?? 255;
      } else {
        const colour = colourType === 2 || colourType === 6; // else grey, with alpha (4) or not (0)
        const grey = depth < 8 ? (sample(0) * 255) / ((1 << depth) - 1) : sample(0);
        rgba[to] = colour ? sample(0) : grey;
        rgba[to + 1] = colour ? sample(1) : grey;
        rgba[to + 2] = colour ? sample(2) : grey;
        rgba[to + 3] = colourType === 6 ? sample(3) : colourType === 4 ? sample(1) : 255;
      }
    }
  }
  return { width, height, rgba };
}

/** The header, palette, palette alpha and the IDAT chunks' bytes (one zlib stream), bounds checked. */
function readChunks(png: Uint8Array, maxSide: number) {
  if (png.length < 8 || SIGNATURE.some((byte, i) => png[i] !== byte)) refuse("not a PNG");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let header: Header | undefined;
  let palette: Uint8Array = new Uint8Array(0);
  let alpha: Uint8Array = new Uint8Array(0);
  const idat: Uint8Array[] = [];
  for (let at = 8; ; ) {
    if (at + 12 > png.length) refuse("truncated before IEND");
    const length = view.getUint32(at);
    const type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    if (at + 12 + length > png.length) refuse(`truncated ${type} chunk`);
    const data = png.subarray(at + 8, at + 8 + length);
    at += 12 + length; // no CRC check: the zlib stream's Adler-32 covers the pixels
    if (!header) {
      if (type !== "IHDR" || length !== 13) refuse("IHDR is not first");
      header = readHeader(new DataView(data.buffer, data.byteOffset, 13), maxSide);
    } else if (type === "PLTE") palette = data;
    else if (type === "tRNS") {
      if (header.colourType !== 3) refuse("a transparent colour key is not read");
      alpha = data;
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") break;
    else if (type === "IHDR") refuse("a second IHDR");
  }
  if (!header) return refuse("no IHDR"); // unreachable (the loop refuses first); narrows the type
  if (header.colourType === 3 && (palette.length === 0 || palette.length % 3 !== 0)) refuse("no valid palette");
  const zlib = new Uint8Array(idat.reduce((sum, part) => sum + part.length, 0));
  idat.reduce((offset, part) => (zlib.set(part, offset), offset + part.length), 0);
  return { header, palette, alpha, zlib };
}

function readHeader(ihdr: DataView, maxSide: number): Header {
  const width = ihdr.getUint32(0);
  const height = ihdr.getUint32(4);
  const [depth, colourType, compression, filter, interlace] = [8, 9, 10, 11, 12].map((i) => ihdr.getUint8(i));
  if (!(width >= 1 && height >= 1 && width <= maxSide && height <= maxSide))
    refuse(`${width}×${height} is not within ${maxSide}×${maxSide}`);
  if (CHANNELS[colourType!] === undefined) refuse(`colour type ${colourType}`);
  const packed = colourType === 0 || colourType === 3 ? [1, 2, 4, 8] : [8];
  if (!(packed.includes(depth!) || (depth === 16 && colourType !== 3))) refuse(`${depth}-bit samples`);
  if (compression !== 0 || filter !== 0) refuse("an unknown compression or filter method");
  if (interlace !== 0) refuse("interlaced");
  return { width, height, depth: depth!, colourType: colourType! };
}

/** A zlib stream (RFC 1950) inflated to exactly `size` bytes: more, less, or a bad checksum is refused. */
async function inflateZlib(zlib: Uint8Array, size: number): Promise<Uint8Array> {
  const [method, flags] = [zlib[0] ?? 0, zlib[1] ?? 0];
  if (zlib.length < 6 || (method & 0x0f) !== 8 || (method * 256 + flags) % 31 !== 0 || flags & 0x20)
    refuse("image data is not a zlib stream");
  let at = 2;
  const deflated = zlib.subarray(0, zlib.length - 4);
  const slices = new ReadableStream<Uint8Array<ArrayBuffer>>(
    {
      pull(controller) {
        if (at >= deflated.length) return controller.close();
        controller.enqueue(deflated.slice(at, (at += INFLATE_SLICE)));
      },
    },
    { highWaterMark: 0 },
  );
  const output = new Uint8Array(size);
  let filled = 0;
  const reader = inflateRaw(slices).getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      if (filled + r.value.length > size) refuse("more image data than its size");
      output.set(r.value, filled);
      filled += r.value.length;
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err instanceof PngRefused ? err : new PngRefused("corrupt image data", { cause: err });
  }
  if (filled !== size) refuse("less image data than its size");
  if (adler32(output) !== new DataView(zlib.buffer, zlib.byteOffset).getUint32(zlib.length - 4))
    refuse("image data fails its checksum");
  return output;
}

function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < bytes.length; i++) {
    a = (a + bytes[i]!) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Each row's filter (PNG §9) undone: `height` rows of `rowBytes`, each after its filter byte. */
function unfilter(filtered: Uint8Array, height: number, rowBytes: number, pixelBytes: number): Uint8Array {
  const out = new Uint8Array(height * rowBytes);
  for (let y = 0; y < height; y++) {
    const filter = filtered[y * (rowBytes + 1)]!;
    if (filter > 4) refuse(`filter type ${filter}`);
    const line = filtered.subarray(y * (rowBytes + 1) + 1, (y + 1) * (rowBytes + 1));
    const row = y * rowBytes;
    for (let x = 0; x < rowBytes; x++) {
      const left = x >= pixelBytes ? out[row + x - pixelBytes]! : 0;
      const up = y > 0 ? out[row + x - rowBytes]! : 0;
      const upLeft = x >= pixelBytes && y > 0 ? out[row + x - rowBytes - pixelBytes]! : 0;
      out[row + x] = line[x]! + predict(filter, left, up, upLeft); // modulo 256, as the Uint8Array stores it
    }
  }
  return out;
}

/** The byte a filter predicts from its left, upper and upper-left neighbours (0 outside the image). */
function predict(filter: number, left: number, up: number, upLeft: number): number {
  switch (filter) {
    case 0:
      return 0;
    case 1:
      return left;
    case 2:
      return up;
    case 3:
      return (left + up) >> 1;
    default: {
      // Paeth: whichever neighbour is closest to left + up − upLeft.
      const p = left + up - upLeft;
      const pa = Math.abs(p - left);
      const pb = Math.abs(p - up);
      const pc = Math.abs(p - upLeft);
      return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
    }
  }
}
