/**
 * An image's placeholder (issue 38): a ThumbHash (the `thumbhash` package) of the stored blob,
 * computed once at ingest so pages can paint before the image arrives. Best effort: content the
 * decoder refuses, or a runtime without one (Workers), simply has none.
 */
import { rgbaToThumbHash } from "thumbhash";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";
import type { ImageTransformer } from "./transformer.js";

/** ThumbHash encodes at most 100 × 100 pixels. */
const MAX_SIDE = 100;

/** The placeholder of a stored raster image (its width known from its header), or null. */
export type Placeholder = (blob: { key: BlobKey; width: number | null }) => Promise<string | null>;

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

export function createPlaceholder(
  blobs: BlobStore,
  transformer: ImageTransformer | undefined,
): Placeholder | undefined {
  const pixels = transformer?.pixels?.bind(transformer);
  if (!pixels) return undefined;
  return async (blob) => {
    if (blob.width === null) return null;
    const stored = await blobs.get(blob.key);
    if (!stored) return null;
    try {
      const { width, height, rgba } = await pixels(stored.body, MAX_SIDE);
      return toBase64(rgbaToThumbHash(width, height, rgba));
    } catch {
      await stored.body.cancel().catch(() => {});
      return null;
    }
  };
}
