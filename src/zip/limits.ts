/**
 * Resource bounds for reading an untrusted zip. Every bound is checked against the central
 * directory up front and again against the bytes actually produced while inflating.
 */

export interface ZipLimits {
  /** Most entries (files and directories) an archive may list. Default 10 000. */
  maxEntries: number;
  /**
   * Most bytes all entries may inflate to together. Checked on the declared sizes before any entry
   * is read; each entry is then held to its declared size, so the actual total cannot exceed it
   * either. Default 1 GiB.
   */
  maxTotalUncompressed: number;
  /** Most bytes one entry may inflate to. Default 512 MiB. */
  maxEntryUncompressed: number;
  /**
   * Highest uncompressed/compressed ratio, per entry and for the whole archive (against its size on
   * disk). Deflate tops out near 1032:1, so real content rarely passes 20; bombs (42.zip, overlapping
   * entries) need far more. Default 100.
   */
  maxCompressionRatio: number;
  /**
   * Sizes up to this many bytes are never ratio-checked, so a small very repetitive file (a 10 KiB
   * run of spaces) is not mistaken for a bomb. Default 1 MiB.
   */
  ratioGraceBytes: number;
  /** Longest entry name in UTF-8 bytes. Default 1024. */
  maxPathLength: number;
  /** Most path segments in an entry name (`a/b/c.txt` has 3). Default 32. */
  maxDepth: number;
}

export const DEFAULT_ZIP_LIMITS: Readonly<ZipLimits> = Object.freeze({
  maxEntries: 10_000,
  maxTotalUncompressed: 1024 * 1024 * 1024,
  maxEntryUncompressed: 512 * 1024 * 1024,
  maxCompressionRatio: 100,
  ratioGraceBytes: 1024 * 1024,
  maxPathLength: 1024,
  maxDepth: 32,
});

/** Fills in defaults and refuses nonsensical overrides (a typo must not silently disable a bound). */
export function resolveZipLimits(overrides: Partial<ZipLimits> = {}): Readonly<ZipLimits> {
  const limits: ZipLimits = { ...DEFAULT_ZIP_LIMITS };
  for (const [key, value] of Object.entries(overrides) as [keyof ZipLimits, number | undefined][]) {
    if (value === undefined) continue;
    if (!Object.hasOwn(DEFAULT_ZIP_LIMITS, key)) throw new TypeError(`unknown zip limit ${key}`);
    if (!Number.isSafeInteger(value) || value < 0)
      throw new TypeError(`zip limit ${key} must be a non-negative integer`);
    limits[key] = value;
  }
  return Object.freeze(limits);
}

/** True when `uncompressed` is more than `ratio` times `compressed`, beyond the grace size. */
export function exceedsRatio(uncompressed: number, compressed: number, limits: Readonly<ZipLimits>): boolean {
  return uncompressed > limits.ratioGraceBytes && uncompressed > compressed * limits.maxCompressionRatio;
}
