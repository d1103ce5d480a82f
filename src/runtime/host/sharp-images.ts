/**
 * The Node/Bun image transformer (issue 30) on sharp (libvips). Loaded lazily, so a process that
 * never transforms never loads libvips, and never bundled into the Worker (nothing under src/ but
 * the host deps imports this file). Order of work, safest first: the header alone (format and
 * dimensions, before any pixel is decoded), then one decode with libvips' own pixel limit and a
 * time limit, EXIF orientation applied, metadata (EXIF, GPS, XMP) dropped, sRGB out.
 */
import { PassThrough, Readable } from "node:stream";
import type { ImageHeader, ImageSource, ImageTransformer } from "../../images/transformer.js";
import type { ImageRequest, OutputFormat } from "../../images/params.js";
import { ProblemError } from "../../problems.js";

/** Raster formats decoded here; SVG (active content) and PDF are never rasterised. */
const DECODED = new Set(["jpeg", "png", "webp", "avif", "heif", "gif", "tiff"]);

type SharpFn = typeof import("sharp");

export interface SharpImageOptions {
  maxPixels: number;
  timeoutSeconds: number;
}

const notTransformable = (detail: string, cause?: unknown) => new ProblemError("NOT_TRANSFORMABLE", detail, { cause });

/** A libvips failure as a problem: its time limit is 503 (try later), anything else a bad source (422). */
function decodeProblem(err: unknown, timeoutSeconds: number, maxPixels: number): ProblemError {
  if (err instanceof ProblemError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/timeout/i.test(message)) {
    return new ProblemError("UNAVAILABLE", `the image transform took longer than ${timeoutSeconds} s`, {
      headers: { "retry-after": "5" },
      cause: err,
    });
  }
  // libvips' own guard, read from the header (sharp checks limitInputPixels there too).
  if (/pixel limit/i.test(message)) {
    return new ProblemError("IMAGE_TOO_LARGE", `the image declares more than ${maxPixels} pixels`, { cause: err });
  }
  return notTransformable("the content could not be decoded as an image (corrupt or unsupported)", err);
}

export function createSharpImages({ maxPixels, timeoutSeconds }: SharpImageOptions): ImageTransformer {
  let loaded: Promise<SharpFn> | undefined;
  const load = () => (loaded ??= import("sharp").then((m) => ((m as { default?: SharpFn }).default ?? m) as SharpFn));

  return {
    async transform(source: ImageSource, request: ImageRequest, formatFor: (h: ImageHeader) => OutputFormat) {
      const sharp = await load();
      // failOn "error": a damaged file is refused, not half-rendered; the pixel limit is libvips' own guard.
      const options = { failOn: "error", limitInputPixels: maxPixels, sequentialRead: true } as const;
      const image = "path" in source ? sharp(source.path, options) : sharp(options);
      // A stream source is fed to sharp as it arrives (sharp gathers it for libvips, bounded by the resource limit).
      if ("stream" in source)
        Readable.fromWeb(source.stream as never)
          .on("error", (e) => image.destroy(e))
          .pipe(image);
      const meta = await image.metadata().catch((err: unknown) => {
        throw decodeProblem(err, timeoutSeconds, maxPixels);
      });
      const format = meta.format ?? "";
      if (!DECODED.has(format)) {
        throw notTransformable(`${format || "this content"} is not a raster image this service transforms`);
      }
      const width = meta.width ?? 0;
      const height = meta.height ?? 0;
      if (!(width > 0 && height > 0)) throw notTransformable("the image declares no dimensions");
      if (width * height > maxPixels) {
        throw new ProblemError(
          "IMAGE_TOO_LARGE",
          `the image is ${width}×${height} (${width * height} pixels); at most ${maxPixels} are transformed`,
        );
      }
      const output = formatFor({ format, width, height });
      const pipeline = image
        .timeout({ seconds: timeoutSeconds })
        .rotate()
        .resize({ width: request.width, height: request.height, fit: request.fit })
        .toColourspace("srgb")
        .toFormat(output, request.quality ? { quality: request.quality } : {});
      // Through a PassThrough: sharp's own Duplex never ends its writable side for a file input,
      // which Readable.toWeb takes for a premature close.
      const out = new PassThrough();
      pipeline.on("error", (err) => out.destroy(err)).pipe(out);
      const body = Readable.toWeb(out) as unknown as ReadableStream<Uint8Array>;
      return { format: output, body: mapErrors(body, (err) => decodeProblem(err, timeoutSeconds, maxPixels)) };
    },
  };
}

/** The same stream, its libvips errors turned into problems (a corrupt body shows only when decoded). */
function mapErrors(
  body: ReadableStream<Uint8Array>,
  problem: (err: unknown) => ProblemError,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(problem(err));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
