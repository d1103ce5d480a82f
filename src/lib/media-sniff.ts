/**
 * Media type detection from the content's first bytes (magic numbers), for an update that names no
 * type (sastix/cms clients cannot send one). `file-type/core` has no Node
 * imports, so it runs on Workers too. Formats without a signature (text, HTML, CSS, JSON) are not
 * detected: the caller then keeps the type it had rather than guessing.
 */
import { fileTypeFromBuffer, supportedMimeTypes } from "file-type/core";
import { DEFAULT_MEDIA_TYPE, mediaTypeEssence } from "./media-types.js";

/** What file-type reads to detect most formats (its own `reasonableDetectionSizeInBytes`). */
const SAMPLE_BYTES = 4100;

/**
 * Passes `body` through unchanged, keeping a copy of its first bytes; `mediaType()` (call it once
 * the body was consumed) detects the type from them. Holds at most ~4 KiB, never the whole content.
 */
export function sniffMediaType(body: ReadableStream<Uint8Array>): {
  body: ReadableStream<Uint8Array>;
  mediaType: () => Promise<string | undefined>;
} {
  const head = new Uint8Array(SAMPLE_BYTES);
  let filled = 0;
  const copy = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (filled < head.length) {
        const n = Math.min(head.length - filled, chunk.length);
        head.set(chunk.subarray(0, n), filled);
        filled += n;
      }
      controller.enqueue(chunk);
    },
  });
  return {
    body: body.pipeThrough(copy),
    mediaType: async () => (filled === 0 ? undefined : (await fileTypeFromBuffer(head.subarray(0, filled)))?.mime),
  };
}

/**
 * The type to store when the client declared none: `announced` (an origin's Content-Type) checked
 * against `sniffed`, the bytes' signature. A type that has a signature must match it (a PNG the bytes
 * contradict is not stored as one; nosniff would serve it as what it is not); one that has none
 * (text, HTML, SVG, JSON) cannot be checked and is kept. Nothing usable announced: the bytes decide.
 */
export function checkedMediaType(announced: string | null | undefined, sniffed: string | undefined): string {
  const claimed = mediaTypeEssence(announced);
  const uncheckable = claimed !== undefined && claimed !== DEFAULT_MEDIA_TYPE && !supportedMimeTypes.has(claimed);
  return uncheckable ? claimed : (sniffed ?? DEFAULT_MEDIA_TYPE);
}
