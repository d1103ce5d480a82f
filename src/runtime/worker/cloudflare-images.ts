/**
 * The Workers image transformer (issue 30) on the Cloudflare Images binding (`[images]` in
 * wrangler.toml): the same parameters and the same derivative cache as sharp on Node and Bun
 * (images/derivatives.ts stores what this returns). Cloudflare decodes outside the isolate, so the
 * Worker's memory never holds the pixels; the header is still read first (`info`) so the pixel
 * limit and the raster-only rule answer the same problems as on Node. The thumbhash placeholder
 * (issue 38) goes through it too: a PNG of at most 100 × 100, read back in the Worker (png-pixels.ts).
 */
import { RASTER as HOST_RASTER } from "../../images/derivatives.js";
import type { ImageRequest, OutputFormat } from "../../images/params.js";
import { FORMAT_MEDIA_TYPES } from "../../images/params.js";
import type { ImageHeader, ImageSource, ImageTransformer } from "../../images/transformer.js";
import { ImageError } from "../../images/errors.js";
import { decodePng } from "../../images/png-pixels.js";

/** The part of the Images binding used here (workerd's `ImagesBinding`). */
export interface ImagesBindingLike {
  info(stream: ReadableStream<Uint8Array>): Promise<{ format: string; width?: number; height?: number }>;
  input(stream: ReadableStream<Uint8Array>): ImagesChain;
}

interface ImagesChain {
  transform(transform: BindingTransform): ImagesChain;
  output(options: { format: string; quality?: number }): Promise<{ image(): ReadableStream<Uint8Array> }>;
}

export interface BindingTransform {
  width?: number;
  height?: number;
  fit?: "scale-down" | "contain" | "pad" | "squeeze" | "cover" | "crop";
}

/** The binding's input formats (MIME) this service transforms: the host's, but TIFF (Cloudflare reads none); never SVG. */
const RASTER = Object.fromEntries(Object.entries(HOST_RASTER).filter(([, format]) => format !== "tiff"));

/**
 * The most bytes of the binding's placeholder PNG read: a 100 × 100 RGBA PNG stored uncompressed
 * is 40 KiB; the rest is room for chunks it may keep (a colour profile).
 */
const MAX_PLACEHOLDER_PNG = 256 * 1024;

/** sharp's fits (the service's parameters) in Cloudflare's words, when both dimensions are given. */
const FITS = { cover: "cover", contain: "pad", inside: "contain", fill: "squeeze" } as const;

/**
 * The binding's transform for `request` on a `header`-sized source, as sharp would resize it. One
 * dimension keeps the aspect ratio (`contain`); `outside` has no Cloudflare fit, so its width is
 * computed (the smallest size covering both dimensions). Without `enlarge` the box shrinks (aspect
 * kept) to fit within the source, as sharp's withoutEnlargement keeps the derivative within it.
 */
export function bindingTransform(request: ImageRequest, header: ImageHeader): BindingTransform {
  const { fit } = request;
  let { width, height } = request;
  if (!request.enlarge) {
    const shrink = Math.min(1, header.width / (width ?? header.width), header.height / (height ?? header.height));
    if (width !== undefined) width = Math.max(1, Math.round(width * shrink));
    if (height !== undefined) height = Math.max(1, Math.round(height * shrink));
  }
  if (width === undefined || height === undefined) return { width, height, fit: "contain" };
  if (fit !== "outside") return { width, height, fit: FITS[fit] };
  const scale = Math.max(width / header.width, height / header.height);
  return {
    width: Math.max(1, Math.round(header.width * (request.enlarge ? scale : Math.min(1, scale)))),
    fit: "contain",
  };
}

/** A binding failure as a refusal (codes: developers.cloudflare.com/images/reference/troubleshooting). */
function bindingProblem(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "number") return err; // not the service's refusal: a fault, reported as one
  if (code === 9413)
    return new ImageError("IMAGE_TOO_LARGE", "the image exceeds the Images service's area limit", { cause: err });
  // 9422: the account's transformation quota; 95xx: the service is unreachable or overloaded.
  if (code === 9422 || (code >= 9500 && code < 9520)) {
    return new ImageError("IMAGE_BUSY", "the Images service cannot transform now", {
      retryAfterSeconds: 5,
      cause: err,
    });
  }
  return new ImageError("NOT_TRANSFORMABLE", "the content could not be decoded as an image (corrupt or unsupported)", {
    cause: err,
  });
}

export function createCloudflareImages(
  images: ImagesBindingLike,
  { maxPixels }: { maxPixels: number },
): ImageTransformer {
  return {
    /**
     * The binding resizes (its longer side to `maxSide`, as sharp's `inside` does on Node, small
     * images enlarged) and answers a PNG: its `rgba` output would carry no width and height, and
     * Miniflare's local binding refuses it. Sized by the header read at ingest, so the blob is read
     * once. A refusal here leaves the resource without a placeholder (images/thumbhash.ts).
     */
    async pixels(source, maxSide, displayed) {
      const { width, height } = displayed;
      if (width * height > maxPixels) {
        await source.cancel();
        throw new ImageError("IMAGE_TOO_LARGE", `the image is ${width}×${height}; at most ${maxPixels} pixels`);
      }
      const longer = width >= height ? { width: maxSide } : { height: maxSide };
      const result = await images
        .input(source)
        .transform({ ...longer, fit: "contain" })
        .output({ format: "image/png" })
        .catch((err: unknown) => {
          throw bindingProblem(err);
        });
      return decodePng(await readAtMost(result.image(), MAX_PLACEHOLDER_PNG), maxSide);
    },

    async transform(source: ImageSource, request: ImageRequest, formatFor: (h: ImageHeader) => OutputFormat) {
      if (!("stream" in source) || !source.reopen)
        throw new Error("the Images binding needs a source it can read twice");
      const info = await images.info(source.stream).catch((err: unknown) => {
        throw bindingProblem(err);
      });
      const format = RASTER[info.format];
      if (!format)
        throw new ImageError("NOT_TRANSFORMABLE", `${info.format} is not a raster image this service transforms`);
      const { width = 0, height = 0 } = info;
      if (!(width > 0 && height > 0)) throw new ImageError("NOT_TRANSFORMABLE", "the image declares no dimensions");
      if (width * height > maxPixels) {
        throw new ImageError(
          "IMAGE_TOO_LARGE",
          `the image is ${width}×${height} (${width * height} pixels); at most ${maxPixels} are transformed`,
        );
      }
      const header = { format, width, height };
      const output = formatFor(header);
      // `info` consumed the first read; the blob is content-addressed, so the second read is the same bytes.
      const result = await images
        .input(await source.reopen())
        .transform(bindingTransform(request, header))
        .output({ format: FORMAT_MEDIA_TYPES[output], ...(request.quality ? { quality: request.quality } : {}) })
        .catch((err: unknown) => {
          throw bindingProblem(err);
        });
      return { format: output, body: result.image() };
    },
  };
}

/** All of `stream`, refused past `limit` bytes (the binding's answer is small; this keeps it so). */
async function readAtMost(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    size += r.value.length;
    if (size > limit) {
      await reader.cancel();
      throw new ImageError("NOT_TRANSFORMABLE", `the Images service answered more than ${limit} bytes`);
    }
    chunks.push(r.value);
  }
  const bytes = new Uint8Array(size);
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  return bytes;
}
