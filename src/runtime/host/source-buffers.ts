/**
 * Reused buffers that small image sources are read into for libvips (issue 30). libvips decodes
 * a JPEG from memory faster than from a file it reads 4 KiB at a time, and the fs driver's blob
 * (its header first) then needs no temp copy: a 12 MP JPEG's first 320 px WebP went from 83 to
 * 74 ms on Node and 85 to 75 on Bun, measured side by side. Reused, never fresh: a fresh 5 MB
 * buffer's page faults cost 20 ms here, and sharp from fresh buffers took 60 or 100 ms by turns.
 *
 * Bounded: at most `count` buffers of `bytes` each, per process, so memory does not grow with
 * load; made when first needed (one at the warm-up). A larger source, one of unknown size, or one
 * arriving while every buffer is in use goes through a file as before (image-spool.ts). A buffer
 * is given back only once libvips has stopped with it.
 */
import { open } from "node:fs/promises";
import { headerGuard } from "./image-spool.js";

/** How large a source is decoded from memory: a 12 MP phone photo is 3–6 MB. */
export const SOURCE_BUFFER_BYTES = 8 * 1024 * 1024;

export interface SourceBuffers {
  /** A free buffer that holds `size` bytes, or undefined (too large, or all in use). */
  take(size: number): Buffer | undefined;
  /** Gives back a buffer `take` handed out (anything else, or a second give, is ignored). */
  give(buffer: Buffer): void;
  /** Makes one buffer now and touches its pages (the warm-up), so a lone first request pays no faults. */
  prepare(): void;
}

export function createSourceBuffers({
  count,
  bytes = SOURCE_BUFFER_BYTES,
}: {
  count: number;
  bytes?: number;
}): SourceBuffers {
  const free: Buffer[] = [];
  const inUse = new Set<Buffer>();
  let made = 0;
  // allocUnsafeSlow: outside Node's pool; its pages are faulted in by the first read into it.
  const make = () => (made++, Buffer.allocUnsafeSlow(bytes));
  return {
    take(size) {
      if (size > bytes) return undefined;
      const buffer = free.pop() ?? (made < count ? make() : undefined);
      if (buffer) inUse.add(buffer);
      return buffer;
    },
    give(buffer) {
      if (inUse.delete(buffer)) free.push(buffer);
    },
    prepare() {
      if (made === 0) free.push(make().fill(0));
    },
  };
}

/** `size` bytes of the file at `path` from `offset`, read into the start of `buffer`. */
export async function readFileInto(buffer: Buffer, path: string, offset: number, size: number): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    for (let read = 0; read < size; ) {
      const { bytesRead } = await file.read(buffer, read, size - read, offset + read);
      if (bytesRead === 0) throw new Error(`${path} ended after ${read} of its ${size} bytes`);
      read += bytesRead;
    }
  } finally {
    await file.close();
  }
  return buffer.subarray(0, size);
}

/**
 * A stream's bytes, `size` of them exactly, read into the start of `buffer`. Its header is read on
 * the way in: a bomb is refused after its first bytes and the rest is never fetched (image-spool.ts).
 */
export async function readStreamInto(
  buffer: Buffer,
  stream: ReadableStream<Uint8Array>,
  size: number,
  maxPixels: number,
): Promise<Buffer> {
  const reader = stream.pipeThrough(headerGuard(maxPixels)).getReader();
  let at = 0;
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      if (at + chunk.value.length > size) throw new Error(`the image source is longer than its ${size} bytes`);
      buffer.set(chunk.value, at);
      at += chunk.value.length;
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err;
  }
  if (at !== size) throw new Error(`the image source ended after ${at} of its ${size} bytes`);
  return buffer.subarray(0, size);
}
