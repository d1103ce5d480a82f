/**
 * The one error the image derivatives and their transformers throw. It knows nothing of HTTP (as
 * zip/errors.ts): a stable `code`, a detail for people, the query parameter it concerns, and how
 * long to wait before trying again. The HTTP edge turns it into a problem (src/http/domain-problems.ts).
 */

export const IMAGE_ERROR_CODES = [
  /** A query parameter the transform cannot take (`field` names it). */
  "IMAGE_PARAM_INVALID",
  /** A query parameter this caller may not send (a signed link's holder: presets only). */
  "IMAGE_PARAM_FORBIDDEN",
  /** Every slot and queue place is taken, or the transform ran past its time: try again later. */
  "IMAGE_BUSY",
  /** This runtime has no transformer. */
  "TRANSFORM_UNAVAILABLE",
  /** The content is not a raster image this service decodes. */
  "NOT_TRANSFORMABLE",
  /** The image declares more pixels than are transformed. */
  "IMAGE_TOO_LARGE",
] as const;

export type ImageErrorCode = (typeof IMAGE_ERROR_CODES)[number];

export interface ImageErrorOptions {
  cause?: unknown;
  /** The query parameter at fault: its pointer (`/query/width`) and what it must be. */
  field?: { pointer: string; detail: string };
  /** Seconds to wait before trying again (IMAGE_BUSY). */
  retryAfterSeconds?: number;
}

export class ImageError extends Error {
  readonly code: ImageErrorCode;
  readonly field?: { pointer: string; detail: string };
  readonly retryAfterSeconds?: number;

  constructor(code: ImageErrorCode, detail: string, options: ImageErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = "ImageError";
    this.code = code;
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The ImageError a failure carries in its causes (a decode refusal inside a stream), if any. */
export function imageErrorIn(err: unknown): ImageError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof ImageError) return e;
  }
  return undefined;
}
