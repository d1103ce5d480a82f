/**
 * Body-stream and byte-pattern helpers for the blob-store tests. Web APIs only — nothing from
 * `node:` — because the conformance suite that uses them also runs inside workerd.
 */

/** A deterministic, non-repeating-looking byte per absolute offset, so misplaced chunks and parts are detected. */
export const patternByte = (i: number) => (i * 131 + (i >>> 11) * 7 + (i >>> 19)) & 0xff;

/** `length` bytes of the pattern starting at absolute `offset`. */
export function pattern(offset: number, length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = patternByte(offset + i);
  return bytes;
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
