/**
 * The runtime-free contract of an image transformer: the app hands it the source's bytes and a
 * normalised request, and gets the derivative's bytes as a stream. Node and Bun implement it with
 * sharp (runtime/host/sharp-images.ts); a runtime without one answers 501 TRANSFORM_UNAVAILABLE.
 * Implementations refuse with ImageErrors (errors.ts): NOT_TRANSFORMABLE / IMAGE_TOO_LARGE (422), IMAGE_BUSY (503).
 */
import type { ImageRequest, OutputFormat } from "./params.js";

/**
 * Where the source's bytes are: a local file the library may read itself (from `offset`, `size`
 * long, when the file holds more: the fs driver's blob files start with its header), or a stream
 * of them, `size` long when known; `reopen` reads them again from the start (the Workers binding
 * reads the header with one call, then transforms with another).
 */
export type ImageSource =
  | { path: string; offset?: number; size?: number }
  | { stream: ReadableStream<Uint8Array>; size?: number; reopen?: () => Promise<ReadableStream<Uint8Array>> };

export interface ImageHeader {
  /** The decoder's name for the format (jpeg, png, webp, avif, gif, tiff…). */
  format: string;
  width: number;
  height: number;
}

export interface ImageTransformer {
  /**
   * Transforms `source` as `request` says into `format` (already resolved from `auto` with
   * `formatFor`, given the source's header). Reads the header first and refuses before decoding.
   */
  transform(
    source: ImageSource,
    request: ImageRequest,
    formatFor: (header: ImageHeader) => OutputFormat,
  ): Promise<{
    format: OutputFormat;
    body: ReadableStream<Uint8Array>;
    /** Settles once the library has stopped working on it, read or not (limit.ts holds its slot till then). */
    finished?: Promise<void>;
  }>;
  /**
   * The image decoded and resized to fit `maxSide` × `maxSide`, as RGBA bytes (the thumbhash
   * placeholder's input, issue 38); `displayed` is its size as its header at ingest says (EXIF
   * orientation applied), which a transformer that cannot read the stream twice (Workers) sizes
   * its request by. Absent where the runtime has no transformer (Workers without `[images]`).
   */
  pixels?(
    source: ReadableStream<Uint8Array>,
    maxSide: number,
    displayed: { width: number; height: number },
  ): Promise<{ width: number; height: number; rgba: Uint8Array }>;
  /** Loads the library and runs one tiny transform, so the first request pays for neither. */
  warm?(): Promise<void>;
}
