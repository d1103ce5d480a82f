/**
 * The Node/Bun image transformer (issue 30) on sharp (libvips). Loaded lazily, so a process that
 * never transforms never loads libvips, and never bundled into the Worker (nothing under src/ but
 * the host deps imports this file). Order of work, safest first: the header alone (format and
 * dimensions, before any pixel is decoded), then one decode with libvips' own pixel limit and a
 * time limit, EXIF orientation applied, metadata (EXIF, GPS, XMP) dropped, sRGB out.
 */
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { tmpdir } from "node:os";
import { avifLargestFrame, type ReadAt } from "../../images/avif-frames.js";
import type { ImageHeader, ImageSource, ImageTransformer } from "../../images/transformer.js";
import type { ImageRequest, OutputFormat } from "../../images/params.js";
import { ImageError } from "../../images/errors.js";
import { spoolFileRange, spoolImage, type SpooledImage, tooManyPixels } from "./image-spool.js";
import { createSourceBuffers, readFileInto, readStreamInto } from "./source-buffers.js";

/** Raster formats decoded here; SVG (active content) and PDF are never rasterised. */
const DECODED = new Set(["jpeg", "png", "webp", "avif", "heif", "gif", "tiff"]);

type SharpFn = typeof import("sharp");

export interface SharpImageOptions {
  maxPixels: number;
  timeoutSeconds: number;
  /** Where a streamed source (S3, R2) is written for libvips to read; default the OS's temp folder. */
  spoolDir?: string;
  /** Sources up to `bytes` (8 MiB) are read into one of `count` reused buffers (source-buffers.ts); default 2. */
  buffers?: { count: number; bytes?: number };
}

const noop = () => {};

/** Reads ranges of `input`, a file's path or the bytes, for the AVIF frame check. */
async function withReader<T>(input: string | Buffer, use: (read: ReadAt) => Promise<T>): Promise<T> {
  if (typeof input !== "string") return use(async (offset, length) => input.subarray(offset, offset + length));
  const file = await open(input, "r");
  try {
    return await use(async (offset, length) => {
      const bytes = Buffer.alloc(length);
      const { bytesRead } = await file.read(bytes, 0, length, offset);
      return bytes.subarray(0, bytesRead);
    });
  } finally {
    await file.close();
  }
}

/**
 * HEIF/AVIF: the frames the decoder will allocate, read from the AV1 bitstream, not the `ispe`
 * claim libvips' pixel limit reads (avif-frames.ts); any over `maxPixels`, or unreadable, is refused.
 * Every other format's decoder allocates from the header libvips checked (PNG IHDR, JPEG SOF, GIF
 * screen, WebP canvas, TIFF tags).
 */
async function checkRealFrames(input: string | Buffer, compression: string | undefined, maxPixels: number) {
  if (compression !== "av1") throw notTransformable("only AV1-coded HEIF (AVIF) is transformed");
  const frame = await withReader(input, avifLargestFrame);
  if (!frame) throw notTransformable("the AVIF's frame size could not be read from its AV1 data");
  if (frame.width * frame.height > maxPixels) throw tooManyPixels(frame.width, frame.height, maxPixels);
}

const notTransformable = (detail: string, cause?: unknown) => new ImageError("NOT_TRANSFORMABLE", detail, { cause });

/** A libvips failure as a refusal: its time limit is IMAGE_BUSY (503, try later), anything else a bad source (422). */
function decodeProblem(err: unknown, timeoutSeconds: number, maxPixels: number): ImageError {
  if (err instanceof ImageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/timeout/i.test(message)) {
    return new ImageError("IMAGE_BUSY", `the image transform took longer than ${timeoutSeconds} s`, {
      retryAfterSeconds: 5,
      cause: err,
    });
  }
  // libvips' own guard, read from the header (sharp checks limitInputPixels there too).
  if (/pixel limit/i.test(message)) {
    return new ImageError("IMAGE_TOO_LARGE", `the image declares more than ${maxPixels} pixels`, { cause: err });
  }
  return notTransformable("the content could not be decoded as an image (corrupt or unsupported)", err);
}

export function createSharpImages({
  maxPixels,
  timeoutSeconds,
  spoolDir = tmpdir(),
  buffers: bufferSizes = { count: 2 },
}: SharpImageOptions): ImageTransformer {
  let loaded: Promise<SharpFn> | undefined;
  const buffers = createSourceBuffers(bufferSizes);
  const load = () => (loaded ??= import("sharp").then((m) => ((m as { default?: SharpFn }).default ?? m) as SharpFn));

  /** The derivative of `input` (a file's path or the bytes); `done` runs once libvips has stopped with it. */
  async function decode(
    input: string | Buffer,
    request: ImageRequest,
    formatFor: (h: ImageHeader) => OutputFormat,
    done: () => void,
  ) {
    const sharp = await load();
    // failOn "error": a damaged file is refused, not half-rendered; the pixel limit is libvips' own guard.
    let image: ReturnType<SharpFn>;
    let meta: Awaited<ReturnType<ReturnType<SharpFn>["metadata"]>>;
    try {
      // The constructor refuses some input itself (an empty buffer: an empty source), before metadata.
      image = sharp(input, { failOn: "error", limitInputPixels: maxPixels, sequentialRead: true });
      meta = await image.metadata();
    } catch (err) {
      throw decodeProblem(err, timeoutSeconds, maxPixels);
    }
    const format = meta.format ?? "";
    if (!DECODED.has(format)) {
      throw notTransformable(`${format || "this content"} is not a raster image this service transforms`);
    }
    const width = meta.width ?? 0;
    const height = meta.height ?? 0;
    if (!(width > 0 && height > 0)) throw notTransformable("the image declares no dimensions");
    if (width * height > maxPixels) throw tooManyPixels(width, height, maxPixels);
    if (format === "heif") await checkRealFrames(input, meta.compression, maxPixels);
    const output = formatFor({ format, width, height });
    const pipeline = image
      .timeout({ seconds: timeoutSeconds })
      .rotate()
      // Never past the source's size unless asked: a 64×48 PNG made a 16 MP derivative.
      .resize({ width: request.width, height: request.height, fit: request.fit, withoutEnlargement: !request.enlarge })
      .toColourspace("srgb")
      .toFormat(output, request.quality ? { quality: request.quality } : {});
    // A buffer: sharp's stream output is the same one buffer, pushed when libvips is done. Its
    // promise says when libvips has stopped, which its stream would not once its reader is gone.
    const encoded = pipeline.toBuffer();
    const finished = encoded.then(noop, noop);
    void finished.then(done);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const bytes = await encoded;
          controller.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
          controller.close();
        } catch (err) {
          // A corrupt body shows only when decoded: its libvips error as a problem.
          controller.error(decodeProblem(err, timeoutSeconds, maxPixels));
        }
      },
    });
    return { format: output, body, finished };
  }

  return {
    async pixels(source, maxSide) {
      const sharp = await load();
      const pipeline = sharp({ failOn: "error", limitInputPixels: maxPixels, sequentialRead: true })
        .timeout({ seconds: timeoutSeconds })
        .rotate()
        .resize({ width: maxSide, height: maxSide, fit: "inside" })
        .toColourspace("srgb")
        .ensureAlpha()
        .raw();
      Readable.fromWeb(source as NodeReadableStream<Uint8Array>)
        .on("error", (err) => pipeline.destroy(err))
        .pipe(pipeline);
      const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
      return {
        width: info.width,
        height: info.height,
        rgba: new Uint8Array(data.buffer, data.byteOffset, data.length),
      };
    },
    async warm() {
      buffers.prepare();
      const sharp = await load();
      // A JPEG decoded and a WebP encoded, 8 × 8: libvips' decoder, resampler and encoder set up.
      const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#888" } })
        .jpeg()
        .toBuffer();
      await sharp(jpeg).resize({ width: 4 }).webp().toBuffer();
    },

    async transform(source: ImageSource, request: ImageRequest, formatFor: (h: ImageHeader) => OutputFormat) {
      const size = source.size;
      const buffer = size === undefined ? undefined : buffers.take(size);
      if (buffer) {
        const give = () => buffers.give(buffer);
        try {
          const bytes =
            "path" in source
              ? await readFileInto(buffer, source.path, source.offset ?? 0, size!)
              : await readStreamInto(buffer, source.stream, size!, maxPixels);
          return await decode(bytes, request, formatFor, give);
        } catch (err) {
          give();
          throw err;
        }
      }
      if ("path" in source && !source.offset) return decode(source.path, request, formatFor, () => {});
      // A larger streamed source (S3, R2) or file range (the fs driver's blob after its header), or
      // one arriving while every buffer is in use, goes to a temp file: sharp would gather a stream
      // whole, and reads a file only from its start.
      const spooled: SpooledImage =
        "path" in source
          ? await spoolFileRange(source.path, source.offset!, source.size, spoolDir)
          : await spoolImage(source.stream, spoolDir, maxPixels);
      const remove = () => void spooled.remove().catch(() => {});
      try {
        return await decode(spooled.path, request, formatFor, remove);
      } catch (err) {
        remove();
        throw err;
      }
    },
  };
}
