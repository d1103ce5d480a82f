import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseSha256Digest, sha256DigestField, wantsSha256 } from "../../src/lib/digest-fields.js";

// RFC 9530 Appendix: sha-256 of the JSON `{"hello": "world"}` is this field.
const HELLO_FIELD = "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:";
const HELLO_HEX = "5f8f04f6a3a892aaabbddb6cf273894493773960d4a325b105fee46eef4304f1";

describe("digest fields", () => {
  it("formats and parses the RFC's example", () => {
    expect(sha256DigestField(HELLO_HEX)).toBe(HELLO_FIELD);
    expect(parseSha256Digest(HELLO_FIELD)).toEqual({ kind: "sha256", hex: HELLO_HEX });
    expect(parseSha256Digest(`sha-512=:AAAA:, ${HELLO_FIELD}`)).toEqual({ kind: "sha256", hex: HELLO_HEX });
  });

  it("writes each digest's field right also when it remembers many (the memo is bounded)", () => {
    const hexOf = (i: number) => i.toString(16).padStart(64, "0");
    const fieldOf = (i: number) => `sha-256=:${Buffer.from(hexOf(i), "hex").toString("base64")}:`;
    for (let i = 0; i < 3000; i++) expect(sha256DigestField(hexOf(i))).toBe(fieldOf(i));
    for (const i of [0, 1023, 1024, 2999]) expect(sha256DigestField(hexOf(i))).toBe(fieldOf(i));
    expect(sha256DigestField(HELLO_HEX)).toBe(HELLO_FIELD);
  });

  it("formats any SHA-256 as Node's base64 would (and round-trips through the parser)", () => {
    for (let seed = 0; seed < 200; seed++) {
      const hex = createHash("sha256").update(String(seed)).digest("hex");
      const field = sha256DigestField(hex);
      expect(field).toBe(`sha-256=:${Buffer.from(hex, "hex").toString("base64")}:`);
      expect(parseSha256Digest(field)).toEqual({ kind: "sha256", hex });
    }
  });

  it("tells absent (other algorithms) from malformed", () => {
    expect(parseSha256Digest(null)).toEqual({ kind: "absent" });
    expect(parseSha256Digest("sha-512=:AAAA:")).toEqual({ kind: "absent" });
    for (const bad of [
      "sha-256=:AAAA:",
      "sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
      "sha-256=:!!:",
      ",",
      "SHA-256",
    ]) {
      expect(parseSha256Digest(bad), bad).toEqual({ kind: "malformed" });
    }
  });

  it("reads preferences", () => {
    expect(wantsSha256("sha-256=1")).toBe(true);
    expect(wantsSha256("sha-512=10, sha-256=3")).toBe(true);
    expect(wantsSha256("sha-256=0")).toBe(false);
    expect(wantsSha256("sha-512=5")).toBe(false);
    expect(wantsSha256(undefined)).toBe(false);
  });
});
