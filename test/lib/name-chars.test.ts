import { describe, expect, it } from "vitest";
import { hasBidiControl, hasControlChar, hasLineSeparator, maskUnsafeChars } from "../../src/lib/name-chars.js";

describe("characters no name may hold", () => {
  // UAX #9 Bidi_Control: the embeddings and overrides, the isolates, and the marks (ALM, LRM, RLM).
  const bidi = [
    "\u202A",
    "\u202B",
    "\u202C",
    "\u202D",
    "\u202E",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200E",
    "\u200F",
    "\u061C",
  ];
  it.each(bidi.map((c) => [`U+${c.codePointAt(0)!.toString(16).toUpperCase()}`, c]))(
    "%s is a bidirectional control",
    (_label, c) => {
      expect(hasBidiControl(`invoice${c}fdp.exe`)).toBe(true);
    },
  );

  it("right-to-left letters, marks of other scripts and joiners are not", () => {
    for (const name of ["שלום.txt", "عربي.txt", "日本語.txt", "e\u0301.txt", "a\u200Db.txt", "a\u200Bb.txt"])
      expect(hasBidiControl(name)).toBe(false);
  });

  it("controls and line separators", () => {
    expect(["a\u0000", "a\n", "a\u007f", "a\u0085"].every(hasControlChar)).toBe(true);
    expect(hasControlChar("a b")).toBe(false);
    expect(["a\u2028", "a\u2029"].every(hasLineSeparator)).toBe(true);
    expect(hasLineSeparator("a\u0085")).toBe(false);
  });

  it("maskUnsafeChars turns controls and bidirectional controls into '_' (names stored before they were refused)", () => {
    expect(maskUnsafeChars("invoice\u202Efdp.exe")).toBe("invoice_fdp.exe");
    expect(maskUnsafeChars("a\r\nb\u2066c\u061Cd")).toBe("a__b_c_d");
    expect(maskUnsafeChars("שלום.txt")).toBe("שלום.txt");
  });
});
