import { describe, expect, it } from "vitest";
import {
  answerCacheHeaders,
  CONTENT_VARY,
  cacheControl,
  type CacheSettings,
  IMMUTABLE_SECONDS,
} from "../../src/http/cache-policy.js";

const open: CacheSettings = { publicRead: true, maxAge: 0, staleWhileRevalidate: 0 };
const closed: CacheSettings = { publicRead: false, maxAge: 0, staleWhileRevalidate: 0 };

describe("cache policy (issue 28 table)", () => {
  it("versioned URLs and revisions are immutable for a year: public when reads are open, else private", () => {
    expect(cacheControl(open, { kind: "immutable" })).toBe("public, max-age=31536000, immutable");
    expect(cacheControl(closed, { kind: "immutable" })).toBe("private, max-age=31536000, immutable");
    expect(IMMUTABLE_SECONDS).toBe(31_536_000);
  });

  it("a mutable URL revalidates each time by default (public or private)", () => {
    expect(cacheControl(open, { kind: "mutable" })).toBe("public, no-cache");
    expect(cacheControl(closed, { kind: "mutable" })).toBe("private, no-cache");
  });

  it("CMS_CACHE_MAX_AGE (and the optional stale window) make a public mutable URL fresh for N seconds", () => {
    expect(cacheControl({ ...open, maxAge: 10 }, { kind: "mutable" })).toBe("public, max-age=10");
    expect(cacheControl({ ...open, maxAge: 10, staleWhileRevalidate: 5 }, { kind: "mutable" })).toBe(
      "public, max-age=10, stale-while-revalidate=5",
    );
    // Authenticated content never gets a shared lifetime: a revoked token must not keep reading it.
    expect(cacheControl({ ...closed, maxAge: 10, staleWhileRevalidate: 5 }, { kind: "mutable" })).toBe(
      "private, no-cache",
    );
  });

  it("a signed link is private and fresh at most for its remaining lifetime", () => {
    expect(cacheControl(open, { kind: "signed", seconds: 90 })).toBe("private, max-age=90");
    expect(cacheControl(closed, { kind: "signed", seconds: 90 })).toBe("private, max-age=90");
    // Never negative, never beyond a year.
    expect(cacheControl(open, { kind: "signed", seconds: -5 })).toBe("private, max-age=0");
    expect(cacheControl(open, { kind: "signed", seconds: 10 * IMMUTABLE_SECONDS })).toBe("private, max-age=31536000");
  });

  it("a route overrides the entity's policy for immutable URLs and signed links only", () => {
    expect(answerCacheHeaders(open, false, undefined)).toBeUndefined();
    expect(answerCacheHeaders(open, true, undefined)).toEqual({
      "cache-control": "public, max-age=31536000, immutable",
    });
    expect(answerCacheHeaders(open, true, 60)).toEqual({ "cache-control": "private, max-age=60" });
    expect(answerCacheHeaders(closed, false, 60)).toEqual({ "cache-control": "private, max-age=60" });
  });

  it("content varies on Want-Content-Digest only (CORS answers `*`, so no Origin)", () => {
    expect(CONTENT_VARY).toBe("Want-Content-Digest");
  });
});
