/**
 * The one error the package reader throws. It knows nothing of HTTP (jose's coded errors): a stable
 * `code` for callers and tests, the entry named in the message, and optionally the input the
 * archive came from, as the caller names it (the reader never knows). The HTTP edge turns it into a
 * problem (src/http/domain-problems.ts).
 */

/** Each `reason` and its stable code. */
export const ZIP_ERROR_CODES = {
  /** Not a zip, truncated, internally inconsistent, or CRC/size mismatch. */
  corrupt: "ZIP_CORRUPT",
  /** A valid zip using something we deliberately do not read (method, encryption, split archive). */
  unsupported: "ZIP_UNSUPPORTED",
  /** An entry name that could escape, alias or confuse a path namespace (zip slip, duplicates, links). */
  "unsafe-path": "ZIP_UNSAFE_PATH",
  /** A `ZipLimits` bound was hit (count, size, ratio, path length, depth). */
  limit: "ZIP_LIMIT",
  /** The archive is readable but names no usable start page. */
  "start-page": "ZIP_NO_START_PAGE",
} as const;

export type ZipErrorReason = keyof typeof ZIP_ERROR_CODES;
export type ZipErrorCode = (typeof ZIP_ERROR_CODES)[ZipErrorReason];

export class ZipError extends Error {
  readonly code: ZipErrorCode;
  readonly reason: ZipErrorReason;
  /** Where the archive came from, in the caller's words (a request pointer for the services). */
  readonly input?: string;

  constructor(reason: ZipErrorReason, detail: string, options: { cause?: unknown; input?: string } = {}) {
    super(detail, { cause: options.cause });
    this.name = "ZipError";
    this.code = ZIP_ERROR_CODES[reason];
    this.reason = reason;
    this.input = options.input;
  }

  /** The same error, told which input the archive came from. */
  from(input: string): ZipError {
    const told = new ZipError(this.reason, this.message, { cause: this.cause, input });
    told.stack = this.stack;
    return told;
  }
}

/** Quotes an entry name for messages: JSON escaping keeps control characters and quotes visible. */
export const quoteName = (name: string): string => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}…` : name);
