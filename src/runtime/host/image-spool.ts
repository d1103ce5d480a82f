/**
 * A streamed image source (S3, R2: no local file) written to a temp file for libvips to read. sharp
 * cannot stream its input: given a stream it gathers every chunk into one Buffer before libvips
 * sees a byte (sharp/lib/input.js `_write`, `_flattenBufferIn`), so a 24 MP JPEG from S3 was held
 * whole, once per transform. Spooled, the bytes go to disk as they arrive (backpressure bounds what
 * is in memory to a few chunks) and libvips reads the file sequentially. The header is read on the
 * way in: a source declaring more than `maxPixels` is refused after its first bytes (422), before
 * the rest is downloaded. A local file's range (the fs driver's blob after its header) is copied
 * file to file instead (spoolFileRange).
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ImageHeaderReader } from "../../images/image-header.js";
import { ImageError } from "../../images/errors.js";
import { claimTempDir, sweepTempRoot } from "../../storage/drivers/fs.js";

export interface SpooledImage {
  path: string;
  /** Deletes the file (idempotent; libvips may still hold it open: the bytes go when it lets go). */
  remove(): Promise<void>;
}

/** A folder left by a process on another host (a shared temp folder) goes once untouched this long. */
const SPOOL_MAX_AGE_MS = 60 * 60 * 1000;

/**
 * This process's spool folder, `<root>/<pid>-<uuid>/`, claimed as the fs driver claims its temp
 * folders (storage/drivers/fs/temp.ts), after removing every folder there whose owner is dead: a
 * process killed mid-transform leaves what it was spooling, and before this each kill left a
 * source-sized file in the OS temp folder for good. `release` removes the folder (a graceful stop).
 */
export async function claimSpoolDir(root: string): Promise<{ dir: string; release(): Promise<void> }> {
  const claimed = await claimTempDir(root);
  await sweepTempRoot(root, SPOOL_MAX_AGE_MS, claimed.dir);
  return {
    dir: claimed.dir,
    release: async () => {
      claimed.stop();
      await rm(claimed.dir, { recursive: true, force: true });
    },
  };
}

export const tooManyPixels = (width: number, height: number, maxPixels: number) =>
  new ImageError(
    "IMAGE_TOO_LARGE",
    `the image is ${width}×${height} (${width * height} pixels); at most ${maxPixels} are transformed`,
  );

export async function spoolImage(
  stream: ReadableStream<Uint8Array>,
  dir: string,
  maxPixels: number,
): Promise<SpooledImage> {
  const path = join(dir, `cms-image-${randomUUID()}`);
  const remove = () => rm(path, { force: true });
  const check = headerGuard(maxPixels);
  try {
    await pipeline(Readable.fromWeb(stream.pipeThrough(check) as never), createWriteStream(path, { flags: "wx" }));
  } catch (err) {
    await remove();
    throw err;
  }
  return { path, remove };
}

/**
 * Passes an image's bytes through, reading its header on the way: a source declaring more than
 * `maxPixels` is refused (IMAGE_TOO_LARGE) after its first bytes, and its stream is cancelled, so
 * the bomb's remaining bytes are never fetched.
 */
export function headerGuard(maxPixels: number): TransformStream<Uint8Array, Uint8Array> {
  const header = new ImageHeaderReader();
  let checked = false;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!checked) {
        header.push(chunk);
        const found = header.dimensions();
        if (found && found.width * found.height > maxPixels) throw tooManyPixels(found.width, found.height, maxPixels);
        checked = found !== undefined || header.settled;
      }
      controller.enqueue(chunk);
    },
  });
}

/** Bytes copied per read and write by spoolFileRange. */
const COPY_CHUNK = 1024 * 1024;

/**
 * `size` bytes of the file at `from` (all from `offset` when no size), copied to a temp file for
 * libvips, which reads files only from their start. Read and written in 1 MiB steps on file handles:
 * a 5 MB JPEG through streams took 20–55 ms on Bun (Readable.fromWeb, createWriteStream); here a
 * few. Not Bun.write: on Bun 1.4.5 it copies the whole file, not a `Bun.file(…).slice`'s range.
 * The header is not checked here: libvips reads it from the file before decoding (sharp-images.ts).
 */
export async function spoolFileRange(
  from: string,
  offset: number,
  size: number | undefined,
  dir: string,
): Promise<SpooledImage> {
  const path = join(dir, `cms-image-${randomUUID()}`);
  const remove = () => rm(path, { force: true });
  const source = await open(from, "r");
  try {
    const target = await open(path, "wx");
    try {
      const chunk = Buffer.allocUnsafe(COPY_CHUNK);
      let position = offset;
      let left = size ?? Number.POSITIVE_INFINITY;
      while (left > 0) {
        const { bytesRead } = await source.read(chunk, 0, Math.min(COPY_CHUNK, left), position);
        if (bytesRead === 0) break;
        // A write may take fewer bytes than it is given: the rest goes in the next one.
        for (let written = 0; written < bytesRead; ) {
          written += (await target.write(chunk, written, bytesRead - written)).bytesWritten;
        }
        position += bytesRead;
        left -= bytesRead;
      }
    } finally {
      await target.close();
    }
  } catch (err) {
    await remove();
    throw err;
  } finally {
    await source.close();
  }
  return { path, remove };
}
