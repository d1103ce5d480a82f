/**
 * The one error the package reader throws: a 400 `ProblemError` naming the offending entry, with a
 * machine-readable `reason` so callers and tests need not parse the message.
 */
import { ProblemError } from "../problems.js";

export type ZipErrorReason =
  /** Not a zip, truncated, internally inconsistent, or CRC/size mismatch. */
  | "corrupt"
  /** A valid zip using something we deliberately do not read (method, encryption, split archive). */
  | "unsupported"
  /** An entry name that could escape, alias or confuse a path namespace (zip slip, duplicates, links). */
  | "unsafe-path"
  /** A `ZipLimits` bound was hit (count, size, ratio, path length, depth). */
  | "limit"
  /** The archive is readable but names no usable start page. */
  | "start-page";

/** Where the zip came from in the request: all package problems point at the registered URI. */
export const ZIP_ERROR_POINTER = "/body/resourceExternalURI";

export class ZipError extends ProblemError {
  readonly reason: ZipErrorReason;

  constructor(reason: ZipErrorReason, detail: string, options: { cause?: unknown } = {}) {
    super("VALIDATION_FAILED", detail, { errors: [{ pointer: ZIP_ERROR_POINTER, detail }], cause: options.cause });
    this.name = "ZipError";
    this.reason = reason;
  }
}

/** Quotes an entry name for messages: JSON escaping keeps control characters and quotes visible. */
export const quoteName = (name: string): string => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
