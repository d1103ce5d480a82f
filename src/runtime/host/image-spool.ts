/**
 * A streamed image source (S3, R2: no local file) written to a temp file for libvips to read. sharp
 * cannot stream its input: given a stream it gathers every chunk into one Buffer before libvips
 * sees a byte (sharp/lib/input.js `_write`, `_flattenBufferIn`), so a 24 MP JPEG from S3 was held
 * whole, once per transform. Spooled, the bytes go to disk as they arrive (backpressure bounds what
 * is in memory to a few chunks) and libvips reads the file sequentially. The header is read on the
 * way in: a source declaring more than `maxPixels` is refused after its first bytes (422), before
 * the rest is downloaded.
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ImageHeaderReader } from "../../images/image-header.js";
import { ProblemError } from "../../problems.js";

export interface SpooledImage {
  path: string;
  /** Deletes the file (idempotent; libvips may still hold it open: the bytes go when it lets go). */
  remove(): Promise<void>;
}

export const tooManyPixels = (width: number, height: number, maxPixels: number) =>
  new ProblemError(
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
  const header = new ImageHeaderReader();
  let checked = false;
  const check = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!checked) {
        header.push(chunk);
        const found = header.dimensions();
        // Refused here, the source is cancelled: the bomb's remaining bytes are never fetched.
        if (found && found.width * found.height > maxPixels) throw tooManyPixels(found.width, found.height, maxPixels);
        checked = found !== undefined || header.settled;
      }
      controller.enqueue(chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(stream.pipeThrough(check) as never), createWriteStream(path, { flags: "wx" }));
  } catch (err) {
    await remove();
    throw err;
  }
  return { path, remove };
}
