import { describe, expect, it } from "vitest";
import { DEFAULT_ZIP_LIMITS, resolveZipLimits } from "../../src/zip/limits.js";

describe("resolveZipLimits", () => {
  it("takes a known override", () => expect(resolveZipLimits({ maxDepth: 3 }).maxDepth).toBe(3));

  // Only the limits' own names count: Object.prototype's are typos like any other.
  it.each(["toString", "constructor", "hasOwnProperty", "maxDepht"])("refuses the unknown limit %s", (key) => {
    expect(() => resolveZipLimits({ [key]: 1 } as never)).toThrow(`unknown zip limit ${key}`);
    expect(Object.keys(DEFAULT_ZIP_LIMITS)).not.toContain(key);
  });
});
