/**
 * Body-stream and byte-pattern helpers for the blob-store tests. Web APIs only — nothing from
 * `node:` — because the conformance suite that uses them also runs inside workerd.
 */

/** A deterministic, non-repeating-looking byte per absolute offset, so misplaced chunks and parts are detected. */
export const patternByte = (i: number) => (i * 131 + (i >>> 11) * 7 + (i >>> 19)) & 0xff;

const BLOCK = 2048; // (i >>> 11) and (i >>> 19) are constant within an aligned block of 2 KiB...
const PERIOD = 256; // ...where only i * 131 changes, and its low byte repeats every 256 bytes.

/**
 * `length` bytes of the pattern starting at absolute `offset`. Each aligned 2 KiB block is 256 bytes
 * computed and copied out: a byte-by-byte loop cost the S3 multipart tests seconds of CPU at 64 MiB.
 */
export function pattern(offset: number, length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  for (let start = 0; start < length; ) {
    const end = Math.min(length, (Math.floor((offset + start) / BLOCK) + 1) * BLOCK - offset);
    const computed = Math.min(end, start + PERIOD);
    for (let i = start; i < computed; i++) bytes[i] = patternByte(offset + i);
    for (let filled = computed; filled < end; ) {
      const n = Math.min(filled - start, end - filled);
      bytes.copyWithin(filled, start, start + n);
      filled += n;
    }
    start = end;
  }
  return bytes;
}

/** Index of the first byte where `a` and `b` differ (-1: none), both of the same length. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = a.length; // not a.byteLength in the loop's test: V8 re-reads it each time (10x slower)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/**
 * Reads `stream` to its end: its length, and the index of its first byte that differs from the
 * pattern at absolute `offset` (-1: none).
 */
export async function comparePattern(
  stream: ReadableStream<Uint8Array>,
  offset: number,
): Promise<{ mismatch: number; length: number }> {
  let length = 0;
  let mismatch = -1;
  const reader = stream.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (mismatch < 0) {
      const at = firstDifference(r.value, pattern(offset + length, r.value.byteLength));
      if (at >= 0) mismatch = length + at;
    }
    length += r.value.byteLength;
  }
  return { mismatch, length };
}

/** A stream that hands out the given chunks one pull at a time. */
export function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}
