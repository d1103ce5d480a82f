/**
 * An image's placeholder (issue 38): a ThumbHash (the `thumbhash` package) of the stored blob,
 * computed once at ingest so pages can paint before the image arrives: sharp decodes on Node and
 * Bun, the Images binding on Workers (runtime/worker/cloudflare-images.ts). Best effort: content
 * the decoder refuses, or a runtime without one (Workers without `[images]`), simply has none.
 */
import { rgbaToThumbHash } from "thumbhash";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";
import type { ImageTransformer } from "./transformer.js";

/** ThumbHash encodes at most 100 × 100 pixels. */
const MAX_SIDE = 100;

/** The placeholder of a stored raster image (its size known from its header), or null. */
export type Placeholder = (blob: {
  key: BlobKey;
  width: number | null;
  height: number | null;
}) => Promise<string | null>;

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

export function createPlaceholder(
  blobs: BlobStore,
  transformer: ImageTransformer | undefined,
): Placeholder | undefined {
  const pixels = transformer?.pixels?.bind(transformer);
  if (!pixels) return undefined;
  return async (blob) => {
    const { width, height } = blob;
    if (width === null || height === null) return null;
    const stored = await blobs.get(blob.key);
    if (!stored) return null;
    try {
      const small = await pixels(stored.body, MAX_SIDE, { width, height });
      return toBase64(rgbaToThumbHash(small.width, small.height, small.rgba));
    } catch {
      await stored.body.cancel().catch(() => {});
      return null;
    }
  };
}
