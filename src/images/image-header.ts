/**
 * A raster image's width and height read from its header while its bytes stream past (issue 30:
 * resource JSON carries them), without decoding and without holding the file: runtime-free (Workers
 * have no sharp). PNG, GIF, WebP and AVIF/HEIF from their first 64 KiB; JPEG by skipping from
 * segment to segment up to its frame header, wherever it lies (a big EXIF block may come first).
 * Dimensions are as displayed: a JPEG's EXIF orientation 5–8 (a quarter turn) swaps them, as the
 * derivatives apply it. Anything else (SVG, text, a truncated or odd header) has none.
 *
 * No npm package fitted: `image-size` reads buffers (or files through node:fs), and
 * `image-dimensions` gathers a stream's chunks itself instead of watching them go by.
 */

export interface ImageDimensions {
  width: number;
  height: number;
}

/** What PNG, GIF, WebP and AVIF headers (and a JPEG's EXIF orientation) are read from. */
const HEAD_BYTES = 64 * 1024;

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32be = (b: Uint8Array, i: number) => (u16be(b, i) * 0x10000 + u16be(b, i + 2)) >>> 0;
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

const sized = (width: number, height: number): ImageDimensions | undefined =>
  width > 0 && height > 0 ? { width, height } : undefined;

function png(b: Uint8Array): ImageDimensions | undefined {
  if (b.length < 24 || ascii(b, 12, 4) !== "IHDR") return undefined;
  return sized(u32be(b, 16), u32be(b, 20));
}

function gif(b: Uint8Array): ImageDimensions | undefined {
  return b.length < 10 ? undefined : sized(u16le(b, 6), u16le(b, 8));
}

function webp(b: Uint8Array): ImageDimensions | undefined {
  if (b.length < 30) return undefined;
  const chunk = ascii(b, 12, 4);
  // VP8 (lossy): a key frame's start code, then 14-bit width and height.
  if (chunk === "VP8 " && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a)
    return sized(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
  // VP8L (lossless): signature 0x2f, then width − 1 and height − 1 in 14 bits each.
  if (chunk === "VP8L" && b[20] === 0x2f) {
    const bits = (b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24)) >>> 0;
    return sized((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  // VP8X (extended): the canvas, width − 1 and height − 1 in 24 bits each.
  if (chunk === "VP8X") return sized(u24le(b, 24) + 1, u24le(b, 27) + 1);
  return undefined;
}

/** The ISO BMFF boxes in b[start, end): type, where its content starts, where it ends. */
function* boxes(b: Uint8Array, start: number, end: number) {
  for (let at = start; at + 8 <= end; ) {
    const size = u32be(b, at);
    if (size < 8 || at + size > end) return; // 64-bit and to-the-end sizes never hold the meta box we read
    yield { type: ascii(b, at + 4, 4), body: at + 8, end: at + size };
    at += size;
  }
}

const child = (b: Uint8Array, start: number, end: number, type: string) => {
  for (const box of boxes(b, start, end)) if (box.type === type) return box;
  return undefined;
};

const HEIF_BRANDS = new Set(["avif", "avis", "heic", "heix", "mif1"]);

/** AVIF/HEIF: the primary item's `ispe` (image spatial extent) property, found through `ipma`. */
function heif(b: Uint8Array): ImageDimensions | undefined {
  const ftyp = child(b, 0, b.length, "ftyp");
  if (!ftyp) return undefined;
  const brands = [ascii(b, ftyp.body, 4)];
  for (let at = ftyp.body + 8; at + 4 <= ftyp.end; at += 4) brands.push(ascii(b, at, 4));
  if (!brands.some((brand) => HEIF_BRANDS.has(brand))) return undefined;
  const meta = child(b, ftyp.end, b.length, "meta");
  if (!meta) return undefined;
  const inner = meta.body + 4; // a full box: version and flags first
  const pitm = child(b, inner, meta.end, "pitm");
  const primary = pitm ? (b[pitm.body] === 0 ? u16be(b, pitm.body + 4) : u32be(b, pitm.body + 4)) : undefined;
  const iprp = child(b, inner, meta.end, "iprp");
  const ipco = iprp && child(b, iprp.body, iprp.end, "ipco");
  if (!iprp || !ipco) return undefined;
  const properties = [...boxes(b, ipco.body, ipco.end)];
  const extent = (index: number) => {
    const box = properties[index - 1];
    return box?.type === "ispe" ? sized(u32be(b, box.body + 4), u32be(b, box.body + 8)) : undefined;
  };
  const ipma = child(b, iprp.body, iprp.end, "ipma");
  if (ipma && primary !== undefined) {
    const version = b[ipma.body]!;
    const wide = (b[ipma.body + 3]! & 1) === 1;
    let at = ipma.body + 8;
    for (let entries = u32be(b, ipma.body + 4); entries > 0 && at < ipma.end; entries--) {
      const item = version < 1 ? u16be(b, at) : u32be(b, at);
      at += version < 1 ? 2 : 4;
      const count = b[at++]!;
      for (let i = 0; i < count; i++, at += wide ? 2 : 1) {
        const index = wide ? u16be(b, at) & 0x7fff : b[at]! & 0x7f;
        const found = item === primary ? extent(index) : undefined;
        if (found) return found;
      }
    }
  }
  // No association to follow: the first extent is the image's.
  for (let i = 1; i <= properties.length; i++) {
    const found = extent(i);
    if (found) return found;
  }
  return undefined;
}

/** EXIF orientation (1–8) from an APP1 segment's content at `at` ("Exif\0\0" then TIFF), if readable. */
function exifOrientation(b: Uint8Array, at: number): number | undefined {
  if (at + 14 > b.length || ascii(b, at, 6) !== "Exif\0\0") return undefined;
  const tiff = at + 6;
  const little = ascii(b, tiff, 2) === "II";
  const u16 = (i: number) => (little ? u16le(b, i) : u16be(b, i));
  const u32 = (i: number) => (little ? (u16le(b, i) + u16le(b, i + 2) * 0x10000) >>> 0 : u32be(b, i));
  const ifd = tiff + u32(tiff + 4);
  if (ifd + 2 > b.length) return undefined;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > b.length) return undefined;
    if (u16(entry) === 0x0112) return u16(entry + 8);
  }
  return undefined;
}

/** SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC): the frame header holding the dimensions. */
const isFrameHeader = (marker: number) => marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);

/**
 * Reads bytes as they arrive (`push`), keeping only the first HEAD_BYTES; `dimensions()` answers
 * from what it saw. A JPEG is followed segment by segment: it keeps only the segment header at hand.
 */
export class ImageHeaderReader {
  private readonly head = new Uint8Array(HEAD_BYTES);
  private filled = 0;
  private seen = 0;
  // JPEG: the offset of the segment being read, its first bytes, and what was found.
  private segmentAt = 0;
  private readonly segment = new Uint8Array(9);
  private got = 0;
  private jpegDone = false;
  private frame: ImageDimensions | undefined;
  private exifAt: number | undefined;

  push(chunk: Uint8Array): void {
    if (this.filled < HEAD_BYTES) {
      const n = Math.min(HEAD_BYTES - this.filled, chunk.length);
      this.head.set(chunk.subarray(0, n), this.filled);
      this.filled += n;
    }
    const base = this.seen;
    this.seen += chunk.length;
    if (!this.jpegDone && this.filled >= 3) {
      if (this.head[0] === 0xff && this.head[1] === 0xd8 && this.head[2] === 0xff) this.jpeg(chunk, base);
      else this.jpegDone = true;
    }
  }

  /**
   * One step per segment header byte; the bytes of a segment's body are skipped, never visited.
   * Returns at the chunk's end; `break` ends the JPEG's reading for good (found, or not a JPEG).
   */
  private jpeg(chunk: Uint8Array, base: number): void {
    for (;;) {
      const i = this.segmentAt + this.got - base;
      if (i >= chunk.length) return;
      if (i < 0) {
        // Only when the first push held fewer than 3 bytes: those are in the head already.
        this.segment[this.got] = this.head[this.segmentAt + this.got]!;
      } else this.segment[this.got] = chunk[i]!;
      this.got++;
      const s = this.segment;
      if (this.got === 2) {
        if (s[0] !== 0xff) break;
        const marker = s[1]!;
        if (marker === 0xff) {
          // A fill byte: the marker starts one byte later.
          this.segmentAt++;
          this.got = 1;
        } else if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
          this.segmentAt += 2; // SOI, TEM, RSTn: no length
          this.got = 0;
        } else if (marker === 0xd9 || marker === 0xda) break; // no frame before the scan
      } else if (this.got === 4) {
        const length = u16be(s, 2);
        if (length < 2) break;
        if (!isFrameHeader(s[1]!)) {
          if (s[1] === 0xe1 && this.exifAt === undefined) this.exifAt = this.segmentAt + 4;
          this.segmentAt += 2 + length;
          this.got = 0;
        }
      } else if (this.got === 9) {
        this.frame = sized(u16be(s, 7), u16be(s, 5));
        break;
      }
    }
    this.jpegDone = true;
  }

  /** True once more bytes cannot change what `dimensions()` answers (found, or past what is read). */
  get settled(): boolean {
    return this.jpegDone && (this.frame !== undefined || this.filled === HEAD_BYTES);
  }

  /** The image's displayed width and height, if its bytes so far are a raster image's header. */
  dimensions(): ImageDimensions | undefined {
    const b = this.head.subarray(0, this.filled);
    if (this.frame) {
      const orientation = this.exifAt === undefined ? undefined : exifOrientation(b, this.exifAt);
      const { width, height } = this.frame;
      return orientation !== undefined && orientation >= 5 && orientation <= 8
        ? { width: height, height: width }
        : this.frame;
    }
    if (b.length < 12) return undefined;
    if (u32be(b, 0) === 0x89504e47 && u32be(b, 4) === 0x0d0a1a0a) return png(b);
    if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return gif(b);
    if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return webp(b);
    if (ascii(b, 4, 4) === "ftyp") return heif(b);
    return undefined;
  }
}

/**
 * Passes `body` through unchanged, reading its header on the way; `dimensions()` (call it once the
 * body was consumed) answers what it found. Holds at most 64 KiB, never the whole content.
 */
export function readImageDimensions(body: ReadableStream<Uint8Array>): {
  body: ReadableStream<Uint8Array>;
  dimensions: () => ImageDimensions | undefined;
} {
  const header = new ImageHeaderReader();
  const source = body.getReader();
  // A pull-through stream rather than a TransformStream: a quarter of the cost per chunk (Node's
  // web streams), and nothing read ahead of what the blob store asks for.
  const passed = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await source.read();
        if (done) return controller.close();
        if (!header.settled) header.push(value);
        controller.enqueue(value);
      },
      cancel: (reason) => source.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return { body: passed, dimensions: () => header.dimensions() };
}
