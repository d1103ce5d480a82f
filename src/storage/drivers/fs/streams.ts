/**
 * The fs driver's streams: blob files read as pull-based Web streams, and request bodies written
 * into temp files.
 */
import { createHash, randomUUID } from "node:crypto";
import { open, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { StorageError, type BlobInfo, type PutOptions } from "../../blob-store.js";
import { checkChunk, checkHash, checkLimit } from "../utils/put-checks.js";
import { HEADER_LENGTH, HEADER_PREFIX, LAZY_HEADER_PREFIX } from "./blob-format.js";
import { DRIVER, io, ioError, noop, writeFully } from "./file-io.js";

/** Size of the writes the fs driver makes while storing a stream. */
const WRITE_BATCH_BYTES = 256 * 1024;
// Reads start small (a range or a small file is answered at once) and double while much remains:
// a large download costs per chunk (a read, a socket write, a promise each), not per byte.
const FIRST_READ = 64 * 1024;
const MAX_READ = 512 * 1024;

/**
 * A pull-based Web stream over `length` bytes of an open file: each pull reads one chunk, so a slow
 * consumer slows the reads (Node 20's Readable.toWeb buffers eagerly). Closes the handle when done.
 */
export function fileStream(handle: FileHandle, position: number, length: number): ReadableStream<Uint8Array> {
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await handle.close().catch(noop);
  };
  let next = position;
  let remaining = length;
  let readSize = FIRST_READ;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          if (remaining > 0) {
            const want = Math.min(readSize, remaining);
            readSize = Math.min(readSize * 2, MAX_READ);
            const chunk = new Uint8Array(want);
            const { bytesRead } = await handle.read(chunk, 0, want, next);
            if (closed) return; // cancelled while reading
            // Blob files are only ever replaced by rename, never truncated in place.
            if (bytesRead === 0) throw new StorageError(DRIVER, "IO", "blob file is shorter than its header says");
            next += bytesRead;
            remaining -= bytesRead;
            controller.enqueue(bytesRead === want ? chunk : chunk.subarray(0, bytesRead));
          }
          if (remaining === 0) {
            await close();
            controller.close();
          }
        } catch (err) {
          await close();
          controller.error(ioError("read blob", err));
        }
      },
      cancel: close,
    },
    // One chunk of read-ahead (≤ 512 KiB) keeps the disk busy without buffering beyond it.
    { highWaterMark: 1 },
  );
}

/** The SHA-256 (hex) of `length` bytes of an open file from `position`, read in 1 MiB steps. */
export async function hashOf(handle: FileHandle, position: number, length: number): Promise<string> {
  const hash = createHash("sha256");
  const chunk = Buffer.allocUnsafe(Math.min(length, 1024 * 1024));
  for (let done = 0; done < length; ) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.byteLength, length - done), position + done);
    if (bytesRead === 0) break; // shorter than its size: the hash cannot match
    hash.update(chunk.subarray(0, bytesRead));
    done += bytesRead;
  }
  return hash.digest("hex");
}

export interface TempFile {
  path: string;
  info: BlobInfo;
  /** Set only for a lazily written one (`durable: false`): its inode, which its writer need not check. */
  ino?: number;
}

/**
 * Streams `body` into a new temp file after a header placeholder, hashing and counting as it goes;
 * each write is awaited before the next read (backpressure). On any failure the temp file is
 * removed and the body cancelled; an error from the body itself is rethrown unchanged.
 */
export async function writeTempFile(
  tmpDir: string,
  body: ReadableStream<Uint8Array>,
  options: PutOptions,
): Promise<TempFile> {
  const { maxBytes, expectedSha256, durable = true } = options;
  // Same filesystem as the blobs, so the final rename is atomic (rename across devices is not).
  const tempPath = path.join(tmpDir, `${randomUUID()}.part`);
  const reader = body.getReader();
  let bodyFinished = false;
  let handle: FileHandle | undefined;
  try {
    handle = await io("create temp file", () => open(tempPath, "wx"));
    const hash = createHash("sha256");
    let size = 0;
    // Socket reads arrive in 16–64 KiB chunks; each file write is a thread-pool round trip, so
    // small chunks are copied (the producer may reuse its buffer once read() returns the next one)
    // into one batch buffer, written every WRITE_BATCH_BYTES: one copy, one allocation per file.
    let batch: Buffer | undefined;
    let batched = 0;
    let written = 0;
    const write = async (bytes: Uint8Array) => {
      const fileHandle = handle as FileHandle;
      const at = HEADER_LENGTH + written;
      written += bytes.byteLength;
      await io("write temp file", () => writeFully(fileHandle, bytes, at));
    };
    const flush = async () => {
      if (batched === 0) return;
      const bytes = (batch as Buffer).subarray(0, batched);
      batched = 0;
      await write(bytes); // awaited before the next copy into `batch`
    };
    for (;;) {
      const read = await reader.read().catch((err: unknown) => {
        bodyFinished = true; // errored: nothing to cancel, and the caller gets its own error back
        throw err;
      });
      if (read.done) {
        bodyFinished = true;
        break;
      }
      const chunk = read.value;
      checkChunk(chunk);
      checkLimit(DRIVER, maxBytes, size, chunk.byteLength);
      hash.update(chunk);
      size += chunk.byteLength;
      // A chunk as big as a batch goes out as it is (written before the next read).
      if (batched === 0 && chunk.byteLength >= WRITE_BATCH_BYTES) {
        await write(chunk);
        continue;
      }
      for (let from = 0; from < chunk.byteLength; ) {
        batch ??= Buffer.allocUnsafe(WRITE_BATCH_BYTES);
        const n = Math.min(chunk.byteLength - from, WRITE_BATCH_BYTES - batched);
        batch.set(chunk.subarray(from, from + n), batched);
        batched += n;
        from += n;
        if (batched === WRITE_BATCH_BYTES) await flush();
      }
    }
    await flush();
    const sha256 = hash.digest("hex");
    checkHash(DRIVER, sha256, expectedSha256);
    const header = new TextEncoder().encode(`${durable ? HEADER_PREFIX : LAZY_HEADER_PREFIX}${sha256}\n`);
    const fileHandle = handle;
    await io("write temp file", () => writeFully(fileHandle, header, 0));
    if (durable) await io("fsync temp file", () => fileHandle.sync());
    const ino = durable ? undefined : (await io("stat temp file", () => fileHandle.stat())).ino;
    await io("close temp file", () => fileHandle.close());
    handle = undefined;
    return { path: tempPath, info: { size, sha256 }, ino };
  } catch (err) {
    // Stop the producer (e.g. an origin download) instead of leaving it to fill buffers.
    if (!bodyFinished) reader.cancel(err).catch(noop);
    await handle?.close().catch(noop);
    await rm(tempPath, { force: true }).catch(noop);
    throw err;
  }
}
