/**
 * The Worker's PNG reader (issue 38: the thumbhash on Workers reads the Images binding's PNG). Every
 * PNG it reads gives the pixels sharp decodes from the same file; everything else is refused with
 * a PngRefused, quickly, never another error and never a hang. PNGs made by sharp (libpng), and by
 * hand (below) where sharp would not write the case or the damage.
 */
import { crc32, deflateSync } from "node:zlib";
import sharp from "sharp";
import { describe, expect, it, vi } from "vitest";
import { decodePng, PngRefused } from "../../src/images/png-pixels.js";

/** A w×h image of `channels` samples a pixel (its bytes, and sharp on them): gradients with some noise. */
function raw(width: number, height: number, channels: 1 | 2 | 3 | 4) {
  const data = Buffer.alloc(width * height * channels);
  let seed = 7;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    const pixel = Math.floor(i / channels);
    data[i] = ((pixel % width) * 9 + Math.floor(pixel / width) * 5 + (i % channels) * 60 + (seed >>> 28)) & 0xff;
  }
  return { data, image: sharp(data, { raw: { width, height, channels } }) };
}

/** What sharp decodes from `png`: RGBA, 8 bits a sample. */
async function sharpRgba(png: Buffer) {
  const { data, info } = await sharp(png)
    .toColourspace("srgb")
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, rgba: new Uint8Array(data) };
}

/** A sharp-made PNG's bit depth and colour type (IHDR). */
const kind = (png: Buffer) => ({ depth: png[24], colourType: png[25] });

function chunk(type: string, data: Uint8Array) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

const SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** A PNG by hand: IHDR (width, height, depth, colour type, interlace), then `chunks`, then IEND. */
function handmade(
  ihdr: { width: number; height: number; depth?: number; colourType?: number; interlace?: number },
  chunks: Buffer[],
) {
  const head = Buffer.alloc(13);
  head.writeUInt32BE(ihdr.width, 0);
  head.writeUInt32BE(ihdr.height, 4);
  head.set([ihdr.depth ?? 8, ihdr.colourType ?? 2, 0, 0, ihdr.interlace ?? 0], 8);
  return Buffer.concat([SIGNATURE, chunk("IHDR", head), ...chunks, chunk("IEND", new Uint8Array(0))]);
}

/** A 2×2 RGB image's rows, each with filter 0: red, green / blue, white. */
const ROWS_2X2 = Buffer.from([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 255, 255, 255]);
const idat = (filtered: Buffer) => chunk("IDAT", deflateSync(filtered));

async function refusal(png: Uint8Array, maxSide = 100): Promise<string> {
  try {
    await decodePng(png, maxSide);
  } catch (err) {
    expect(err).toBeInstanceOf(PngRefused);
    return (err as Error).message;
  }
  throw new Error("not refused");
}

/** `rows` of RGB pixels, row y filtered with filter y % 5 (PNG §9.2), as the IDAT data holds them. */
function filterRows(rows: number[][]) {
  const bpp = 3;
  const at = (y: number, x: number) => (y >= 0 && x >= 0 ? rows[y]![x]! : 0);
  return Buffer.from(
    rows.flatMap((row, y) => [
      y % 5,
      ...row.map((value, x) => {
        const [left, up, upLeft] = [at(y, x - bpp), at(y - 1, x), at(y - 1, x - bpp)];
        const p = left + up - upLeft;
        // Paeth: the neighbour nearest left + up − upLeft, ties in this order (a stable sort).
        const paeth = [left, up, upLeft].sort((a, b) => Math.abs(p - a) - Math.abs(p - b))[0]!;
        const predicted = [0, left, up, (left + up) >> 1, paeth][y % 5]!;
        return (value - predicted) & 0xff;
      }),
    ]),
  );
}

describe("decodePng reads what the Images binding may answer", () => {
  it.each([
    ["grey", 1, 0],
    ["grey + alpha", 2, 4],
    ["RGB", 3, 2],
    ["RGBA", 4, 6],
  ] as const)("8-bit %s: sharp's pixels", async (_, channels, colourType) => {
    const { image } = raw(37, 23, channels);
    const png = await image
      .toColourspace(channels < 3 ? "b-w" : "srgb")
      .png({ adaptiveFiltering: true })
      .toBuffer();
    expect(kind(png)).toEqual({ depth: 8, colourType });
    expect(await decodePng(png, 100)).toEqual(await sharpRgba(png));
  });

  it.each([
    [2, 1],
    [4, 2],
    [16, 4],
    [256, 8],
  ])("a palette of %i colours (%i-bit), with its alpha (tRNS): sharp's pixels", async (colours, depth) => {
    const png = await raw(30, 20, 4).image.png({ palette: true, colours, dither: 0 }).toBuffer();
    expect(kind(png)).toEqual({ depth, colourType: 3 });
    expect(png.includes("tRNS")).toBe(true);
    expect(await decodePng(png, 100)).toEqual(await sharpRgba(png));
  });

  it("16 bits a sample: the high byte of each", async () => {
    const { data, image } = raw(20, 10, 4);
    const png = await image.toColourspace("rgb16").png().toBuffer();
    expect(kind(png)).toEqual({ depth: 16, colourType: 6 });
    // An 8-bit v becomes v × 257 in 16 bits, whose high byte is v again.
    expect((await decodePng(png, 100)).rgba).toEqual(new Uint8Array(data));
  });

  it("all five row filters undone (a hand-made PNG; libpng chose only some for sharp)", async () => {
    const rows = Array.from({ length: 10 }, (_, y) =>
      Array.from({ length: 12 }, (_, x) => (x * 37 + y * 91 + x * y) & 0xff),
    );
    const png = handmade({ width: 4, height: 10 }, [idat(filterRows(rows))]);
    const rgba = (await decodePng(png, 100)).rgba;
    const expected = rows.flatMap((row) =>
      Array.from({ length: 4 }, (_, x) => [...row.slice(x * 3, x * 3 + 3), 255]).flat(),
    );
    expect(Array.from(rgba)).toEqual(expected);
  });

  it("2-bit grey, its rows ending mid-byte, scaled to 0–255", async () => {
    // 3 pixels a row (6 bits, one byte): 0 1 2 / 3 2 1.
    const png = handmade({ width: 3, height: 2, depth: 2, colourType: 0 }, [
      idat(Buffer.from([0, 0b00011000, 0, 0b11100100])),
    ]);
    const greys = Array.from((await decodePng(png, 100)).rgba.filter((_, i) => i % 4 === 0));
    expect(greys).toEqual([0, 85, 170, 255, 170, 85]);
  });

  it("a PNG split over two IDAT chunks, an unknown chunk between them", async () => {
    const deflated = deflateSync(ROWS_2X2);
    const png = handmade({ width: 2, height: 2 }, [
      chunk("IDAT", deflated.subarray(0, 5)),
      chunk("tEXt", Buffer.from("Comment\0ignored")),
      chunk("IDAT", deflated.subarray(5)),
    ]);
    expect(await decodePng(png, 100)).toEqual({
      width: 2,
      height: 2,
      rgba: Uint8Array.from([255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255]),
    });
  });
});

describe("decodePng refuses anything else with a PngRefused", () => {
  it("what it does not read: interlaced, 1–4-bit samples, a colour key, over the size asked", async () => {
    const interlaced = await raw(16, 16, 3).image.png({ progressive: true }).toBuffer();
    expect(await refusal(interlaced)).toBe("interlaced");
    expect(await refusal(handmade({ width: 2, height: 2, depth: 4 }, [idat(ROWS_2X2)]))).toBe("4-bit samples");
    expect(await refusal(handmade({ width: 2, height: 2, depth: 16, colourType: 3 }, []))).toBe("16-bit samples");
    const keyed = handmade({ width: 2, height: 2 }, [chunk("tRNS", Buffer.alloc(6)), idat(ROWS_2X2)]);
    expect(await refusal(keyed)).toBe("a transparent colour key is not read");
    const large = await raw(101, 40, 3).image.png().toBuffer();
    expect(await refusal(large)).toBe("101×40 is not within 100×100");
    expect(await refusal(handmade({ width: 2, height: 2, colourType: 5 }, [idat(ROWS_2X2)]))).toBe("colour type 5");
  });

  it("malformed files", async () => {
    const good = handmade({ width: 2, height: 2 }, [idat(ROWS_2X2)]);
    expect(await decodePng(good, 100)).toMatchObject({ width: 2, height: 2 });
    expect(await refusal(new Uint8Array(0))).toBe("not a PNG");
    expect(await refusal(Buffer.from("GIF89a, not a PNG at all"))).toBe("not a PNG");
    expect(await refusal(good.subarray(0, 50))).toBe("truncated IDAT chunk");
    expect(await refusal(good.subarray(0, good.length - 12))).toBe("truncated before IEND");
    expect(await refusal(Buffer.concat([SIGNATURE, idat(ROWS_2X2)]))).toBe("IHDR is not first");
    expect(await refusal(handmade({ width: 0, height: 2 }, [idat(ROWS_2X2)]))).toBe("0×2 is not within 100×100");
    expect(await refusal(handmade({ width: 2, height: 2, colourType: 3 }, [idat(ROWS_2X2)]))).toBe("no valid palette");
    const outside = handmade({ width: 2, height: 2, colourType: 3 }, [
      chunk("PLTE", Buffer.from([1, 2, 3])),
      idat(Buffer.from([0, 0, 1, 0, 0, 0])), // index 1 of a one-colour palette
    ]);
    expect(await refusal(outside)).toBe("a pixel outside the palette");
    const filter5 = Buffer.from(ROWS_2X2);
    filter5[7] = 5;
    expect(await refusal(handmade({ width: 2, height: 2 }, [idat(filter5)]))).toBe("filter type 5");
  });

  it("image data that is short, long, damaged or not zlib at all", async () => {
    const png = (data: Buffer) => handmade({ width: 2, height: 2 }, [chunk("IDAT", data)]);
    expect(await refusal(png(deflateSync(ROWS_2X2.subarray(0, 10))))).toBe("less image data than its size");
    expect(await refusal(png(deflateSync(Buffer.concat([ROWS_2X2, ROWS_2X2]))))).toBe("more image data than its size");
    const deflated = deflateSync(ROWS_2X2);
    const wrongSum = Buffer.from(deflated);
    wrongSum[wrongSum.length - 1]! ^= 1;
    expect(await refusal(png(wrongSum))).toBe("image data fails its checksum");
    // The deflate stream cut short (its checksum kept), and one whose blocks are garbage.
    const cut = Buffer.concat([deflated.subarray(0, deflated.length - 8), deflated.subarray(-4)]);
    expect(await refusal(png(cut))).toBe("corrupt image data");
    const garbage = Buffer.concat([deflated.subarray(0, 2), Buffer.alloc(20, 0xff), deflated.subarray(-4)]);
    expect(await refusal(png(garbage))).toBe("corrupt image data");
    expect(await refusal(png(Buffer.from("no zlib header")))).toBe("image data is not a zlib stream");
    expect(await refusal(png(Buffer.alloc(0)))).toBe("image data is not a zlib stream");
  });

  it("a deflate bomb: refused at its declared size, having inflated only its first slices", async () => {
    // 64 MiB of zeros in ~64 KiB; a 100×100 RGBA image is 40 100 bytes filtered.
    const zeros = new Uint8Array(1024 * 1024);
    let left = 64;
    const bomb = Buffer.from(
      await new Response(
        new ReadableStream({ pull: (c) => (left-- > 0 ? c.enqueue(zeros) : c.close()) }).pipeThrough(
          new CompressionStream("deflate"),
        ),
      ).arrayBuffer(),
    );
    const png = handmade({ width: 100, height: 100, colourType: 6 }, [chunk("IDAT", bomb)]);
    // The real inflater, counting what it is given (zip/inflate.ts feeds it a slice at a time).
    let written = 0;
    class Counting extends DecompressionStream {
      override get writable() {
        const inner = super.writable.getWriter();
        return new WritableStream<BufferSource>({
          write: (chunk) => ((written += chunk.byteLength), inner.write(chunk)),
          close: () => inner.close(),
          abort: (reason) => inner.abort(reason),
        });
      }
    }
    vi.stubGlobal("DecompressionStream", Counting);
    try {
      expect(await refusal(png)).toBe("more image data than its size");
    } finally {
      vi.unstubAllGlobals();
    }
    expect(bomb.length).toBeGreaterThan(60_000);
    expect(written).toBeGreaterThan(0);
    // What bounds the work differs by runtime. Node 20's inflater inflates each write at once and
    // takes 16 KiB before its first output, so the rest of the bomb is never fed. Node 22's inflates
    // only as its output is read: it accepts the whole 64 KiB but inflates no more than the reader
    // takes before the refusal (measured: 0.3 MiB of buffers at the peak on both).
    if (Number(process.versions.node.split(".")[0]) < 22) expect(written).toBeLessThan(bomb.length / 2);
  });
});
