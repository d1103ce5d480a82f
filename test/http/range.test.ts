import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentRange, MAX_RANGES, parseRange, unsatisfiedRange } from "../../src/http/range.js";

const ranges = (...pairs: [number, number][]) => ({
  kind: "ranges",
  ranges: pairs.map(([start, end]) => ({ start, end })),
});

describe("parseRange", () => {
  it("ignores an absent header", () => {
    expect(parseRange(null, 100)).toEqual({ kind: "ignore", reason: "absent" });
    expect(parseRange(undefined, 100)).toEqual({ kind: "ignore", reason: "absent" });
  });

  it("parses a closed range", () => {
    expect(parseRange("bytes=10-19", 100)).toEqual(ranges([10, 19]));
  });

  it("parses bytes=0-0 as the first byte", () => {
    expect(parseRange("bytes=0-0", 100)).toEqual(ranges([0, 0]));
  });

  it("parses the last byte both as a closed range and as a suffix", () => {
    expect(parseRange("bytes=99-99", 100)).toEqual(ranges([99, 99]));
    expect(parseRange("bytes=-1", 100)).toEqual(ranges([99, 99]));
  });

  it("parses an open range to the end", () => {
    expect(parseRange("bytes=50-", 100)).toEqual(ranges([50, 99]));
  });

  it("parses a suffix range, whole representation when the suffix is longer", () => {
    expect(parseRange("bytes=-30", 100)).toEqual(ranges([70, 99]));
    expect(parseRange("bytes=-500", 100)).toEqual(ranges([0, 99]));
  });

  it("clamps a last-pos past the end", () => {
    expect(parseRange("bytes=90-1000", 100)).toEqual(ranges([90, 99]));
    expect(parseRange(`bytes=0-${"9".repeat(400)}`, 100)).toEqual(ranges([0, 99]));
  });

  it("accepts the unit case-insensitively and tolerates optional whitespace", () => {
    expect(parseRange("Bytes=0-1", 10)).toEqual(ranges([0, 1]));
    expect(parseRange("BYTES = 0-1 ,  4-5 ", 10)).toEqual(ranges([0, 1], [4, 5]));
    expect(parseRange("bytes=\t0 - 1,\t-2", 10)).toEqual(ranges([0, 1], [8, 9]));
  });

  it("skips empty list elements", () => {
    expect(parseRange("bytes=,0-1,,4-5,", 10)).toEqual(ranges([0, 1], [4, 5]));
  });

  it("keeps the client's order for non-overlapping ranges", () => {
    expect(parseRange("bytes=6-7,0-1,3-3", 10)).toEqual(ranges([6, 7], [0, 1], [3, 3]));
  });

  it("reports other range units as ignorable", () => {
    expect(parseRange("items=0-5", 100)).toEqual({ kind: "ignore", reason: "unit" });
    expect(parseRange("none", 100)).toEqual({ kind: "ignore", reason: "syntax" });
  });

  it.each([
    "bytes",
    "bytes=",
    "bytes=,",
    "bytes=-",
    "bytes=abc",
    "bytes=5-3",
    "bytes=0-1,5-3",
    "bytes=1-2-3",
    "bytes=0x10-20",
    "bytes=-1-2",
    "bytes=+1-2",
    "bytes=1 2-3",
    "bytes=1.5-2",
    "by tes=0-1",
    "=0-1",
  ])("ignores the syntactically invalid %j", (header) => {
    expect(parseRange(header, 100)).toEqual({ kind: "ignore", reason: "syntax" });
  });

  it("is unsatisfiable when every first-pos is at or past the end", () => {
    expect(parseRange("bytes=100-", 100)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=100-200", 100)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=150-160,100-", 100)).toEqual({ kind: "unsatisfiable" });
  });

  it("is unsatisfiable for a zero-length suffix", () => {
    expect(parseRange("bytes=-0", 100)).toEqual({ kind: "unsatisfiable" });
  });

  it("drops only the unsatisfiable specs of a mixed set", () => {
    expect(parseRange("bytes=200-300,0-4,-0", 100)).toEqual(ranges([0, 4]));
  });

  it("treats any range of an empty representation as unsatisfiable", () => {
    for (const header of ["bytes=0-", "bytes=0-0", "bytes=-1", "bytes=-100", "bytes=0-10,-5"]) {
      expect(parseRange(header, 0), header).toEqual({ kind: "unsatisfiable" });
    }
  });

  describe("abuse policy", () => {
    it("coalesces overlapping ranges into one", () => {
      expect(parseRange("bytes=0-50,25-75", 100)).toEqual(ranges([0, 75]));
    });

    it("coalesces adjacent ranges", () => {
      expect(parseRange("bytes=0-4,5-9", 100)).toEqual(ranges([0, 9]));
    });

    it("collapses the classic repeated-range amplification to a single range", () => {
      const header = `bytes=${Array.from({ length: MAX_RANGES }, () => "0-").join(",")}`;
      expect(parseRange(header, 1000)).toEqual(ranges([0, 999]));
    });

    it("sorts and merges when any overlap is present, keeping disjoint survivors separate", () => {
      expect(parseRange("bytes=50-59,0-9,5-14,90-", 100)).toEqual(ranges([0, 14], [50, 59], [90, 99]));
    });

    it("merges a suffix with an overlapping closed range", () => {
      expect(parseRange("bytes=-10,85-94", 100)).toEqual(ranges([85, 99]));
    });

    it("accepts exactly MAX_RANGES ranges", () => {
      const header = `bytes=${Array.from({ length: MAX_RANGES }, (_, i) => `${i * 2}-${i * 2}`).join(",")}`;
      const result = parseRange(header, 1000);
      expect(result.kind).toBe("ranges");
      expect(result.kind === "ranges" && result.ranges).toHaveLength(MAX_RANGES);
    });

    it("ignores the whole header beyond MAX_RANGES ranges", () => {
      const header = `bytes=${Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i * 2}-${i * 2}`).join(",")}`;
      expect(parseRange(header, 1000)).toEqual({ kind: "ignore", reason: "too-many" });
    });

    it("honours a custom cap", () => {
      expect(parseRange("bytes=0-0,2-2,4-4", 10, { maxRanges: 2 })).toEqual({ kind: "ignore", reason: "too-many" });
      expect(parseRange("bytes=0-0,2-2", 10, { maxRanges: 2 })).toEqual(ranges([0, 0], [2, 2]));
    });
  });
});

describe("Content-Range values", () => {
  it("formats served and unsatisfied ranges", () => {
    expect(contentRange({ start: 0, end: 9 }, 100)).toBe("bytes 0-9/100");
    expect(unsatisfiedRange(100)).toBe("bytes */100");
  });
});

describe("parseRange's single-range shortcut", () => {
  it("answers `bytes=first-[last]` exactly as the general parse does the same header in other spellings", () => {
    // Whitespace, an upper-case unit or an empty list element send the same header down the general path.
    const digits = fc.oneof(
      fc.nat({ max: 300 }).map(String),
      fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
      fc.constant(""),
    );
    const spellings = (first: string, last: string) => [
      `bytes= ${first}-${last}`,
      `BYTES=${first}-${last}`,
      `bytes=${first}-${last},`,
      `bytes=\t${first} - ${last} `,
    ];
    fc.assert(
      fc.property(digits, digits, fc.nat({ max: 400 }), (first, last, size) => {
        const fast = parseRange(`bytes=${first}-${last}`, size);
        for (const header of spellings(first, last)) expect(parseRange(header, size)).toEqual(fast);
      }),
      { numRuns: 3000 },
    );
  });

  it("still honours maxRanges: 0 (no range at all)", () => {
    expect(parseRange("bytes=0-9", 100, { maxRanges: 0 })).toEqual({ kind: "ignore", reason: "too-many" });
  });
});
