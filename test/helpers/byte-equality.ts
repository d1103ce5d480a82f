/**
 * A setup file (vitest.config.ts): `toEqual` on two byte arrays compares their bytes at once.
 * vitest compares typed arrays element by element through its generic equality, ~27 µs a byte
 * here: one `toEqual` of two 300 kB arrays took 8 s, and under load such tests hit their timeouts.
 * Only arrays of the same class are decided here (a Buffer against a Uint8Array is left to vitest,
 * so toStrictEqual still tells them apart); a mismatch still gets vitest's diff.
 */
import { expect } from "vitest";

function bytesEqual(a: unknown, b: unknown): boolean | undefined {
  if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor) return undefined;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

expect.addEqualityTesters([bytesEqual]);
