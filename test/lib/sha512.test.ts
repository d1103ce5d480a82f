// The incremental SHA-512 against Web Crypto (the reference) for block-boundary sizes and chunkings,
// plus the FIPS 180-4 examples.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/lib/hex.js";
import { Sha512 } from "../../src/lib/sha512.js";

const reference = async (bytes: Uint8Array<ArrayBuffer>) =>
  toHex(new Uint8Array(await crypto.subtle.digest("SHA-512", bytes)));
const text = (s: string) => new TextEncoder().encode(s);

describe("Sha512", () => {
  it("matches the FIPS 180-4 examples", () => {
    expect(new Sha512().update(text("abc")).hex()).toBe(
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    );
    expect(
      new Sha512()
        .update(
          text(
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
          ),
        )
        .hex(),
    ).toBe(
      "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
    );
  });

  it("matches Web Crypto at every size around the padding and block boundaries, in any chunking", async () => {
    for (const size of [0, 1, 55, 111, 112, 113, 127, 128, 129, 239, 240, 255, 256, 1000, 70_001]) {
      const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 131 + (i >> 7)) & 0xff);
      const expected = await reference(bytes);
      expect(new Sha512().update(bytes).hex(), `${size} in one`).toBe(expected);
      for (const chunk of [1, 7, 128, 1000]) {
        const hash = new Sha512();
        for (let at = 0; at < size; at += chunk) hash.update(bytes.subarray(at, at + chunk));
        expect(hash.hex(), `${size} in ${chunk}s`).toBe(expected);
      }
    }
  });

  it("refuses input after the digest and gives the same digest again", () => {
    const hash = new Sha512().update(text("x"));
    const first = hash.hex();
    expect(hash.hex()).toBe(first);
    expect(() => hash.update(text("y"))).toThrow(/after digest/);
  });
});
