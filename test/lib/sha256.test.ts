// The incremental SHA-256 against Web Crypto (the reference) for boundary sizes, many chunkings and
// multi-MiB inputs, plus the FIPS 180-4 test vectors.
import { describe, expect, it } from "vitest";
import { Sha256, toHex } from "../../src/lib/sha256.js";

const MiB = 1024 * 1024;

async function reference(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** Deterministic pseudo-random bytes (xorshift32), so failures reproduce. */
function noise(length: number, seed = 0x9e3779b9): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let x = seed | 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

const hashInChunks = (bytes: Uint8Array, sizes: (i: number) => number) => {
  const hash = new Sha256();
  for (let offset = 0, i = 0; offset < bytes.byteLength; i++) {
    const size = Math.max(1, sizes(i));
    hash.update(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return hash.hex();
};

describe("Sha256", () => {
  it("matches the FIPS 180-4 examples", () => {
    const text = (s: string) => new TextEncoder().encode(s);
    expect(new Sha256().hex()).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(new Sha256().update(text("abc")).hex()).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(new Sha256().update(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).hex()).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    const million = new Sha256();
    const a = new Uint8Array(1000).fill(0x61);
    for (let i = 0; i < 1000; i++) million.update(a);
    expect(million.hex()).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });

  it("matches Web Crypto for every size from 0 to 300 bytes (all padding boundaries)", async () => {
    const bytes = noise(300);
    for (let n = 0; n <= 300; n++) {
      const slice = bytes.slice(0, n);
      expect(new Sha256().update(slice).hex(), `${n} bytes`).toBe(await reference(slice));
    }
  });

  it.each([55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 65_537])(
    "matches Web Crypto for %i bytes fed one byte at a time, in odd chunks and whole",
    async (n) => {
      const bytes = noise(n, n);
      const expected = await reference(bytes);
      expect(new Sha256().update(bytes).hex()).toBe(expected);
      expect(hashInChunks(bytes, () => 1)).toBe(expected);
      expect(hashInChunks(bytes, (i) => (i * 7) % 131)).toBe(expected);
      expect(hashInChunks(bytes, (i) => [63, 1, 64, 65, 0][i % 5]!)).toBe(expected);
    },
  );

  it.each([1 * MiB, 3 * MiB + 7, 8 * MiB - 1])("matches Web Crypto for %i bytes in 64 KiB-ish chunks", async (n) => {
    const bytes = noise(n, 42);
    const expected = await reference(bytes);
    expect(hashInChunks(bytes, (i) => 65_536 + (i % 3) - 1)).toBe(expected);
  });

  it("reports the length hashed; digest is final and repeatable", () => {
    const hash = new Sha256().update(new Uint8Array(10)).update(new Uint8Array(5));
    expect(hash.length).toBe(15);
    const first = hash.hex();
    expect(hash.hex()).toBe(first);
    const digest = hash.digest();
    digest[0] = digest[0]! ^ 0xff; // callers get a copy
    expect(hash.hex()).toBe(first);
    expect(() => hash.update(new Uint8Array(1))).toThrow(/after digest/);
  });

  it("does not retain the caller's chunk (the producer may reuse its buffer)", async () => {
    const bytes = noise(100);
    const expected = await reference(bytes.slice());
    const chunk = new Uint8Array(bytes.subarray(0, 30));
    const hash = new Sha256().update(chunk);
    chunk.fill(0); // reused by the producer after update returned
    expect(hash.update(bytes.subarray(30)).hex()).toBe(expected);
  });
});
