import { describe, expect, it } from "vitest";
import { decodeBase64, decodedLength, isBase64 } from "../../src/lib/base64.js";

describe("base64", () => {
  it.each([0, 1, 2, 3, 4, 5, 255])("round-trips %i bytes, padded or not, and predicts the decoded length", (n) => {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37) % 256);
    const padded = Buffer.from(bytes).toString("base64");
    for (const text of [padded, padded.replace(/=+$/, "")]) {
      expect(isBase64(text)).toBe(true);
      expect(decodedLength(text)).toBe(n);
      expect(decodeBase64(text)).toEqual(bytes);
    }
  });

  it.each(["a", "ab=c", "a b", "abc==", "ab=", "-_-_", "ab\n"])("refuses %j", (text) => {
    expect(isBase64(text)).toBe(false);
  });

  it("checks 64 MiB of text without overflowing the regexp stack", () => {
    expect(isBase64(Buffer.alloc(48 * 1024 * 1024, 7).toString("base64"))).toBe(true);
  });
});
