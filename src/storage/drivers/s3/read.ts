/**
 * Turning GetObject/HeadObject responses into BlobInfo and bodies: total size from Content-Range or
 * Content-Length, sha256 from object metadata, and exact ranges even from servers that over-serve.
 */
import { isSha256Hex } from "../../keys.js";
import { StorageError, type BlobInfo, type ByteRange } from "../../blob-store.js";
import { DRIVER } from "./errors.js";
import { checkRange } from "../utils/driver-kit.js";

/** User metadata holding the content hash; S3 returns it as the `x-amz-meta-sha256` header. */
export const SHA256_META = "x-amz-meta-sha256";

const noop = () => {};

function contentLength(headers: Headers): number {
  const raw = headers.get("Content-Length");
  const size = raw === null ? NaN : Number(raw);
  if (!Number.isSafeInteger(size) || size < 0)
    throw new StorageError(DRIVER, "IO", "S3 response has no valid Content-Length");
  return size;
}

function metadataSha256(headers: Headers): string {
  const sha256 = headers.get(SHA256_META)?.toLowerCase();
  if (sha256 === undefined || !isSha256Hex(sha256)) {
    throw new StorageError(DRIVER, "IO", "object has no sha256 metadata (not written by this driver?)");
  }
  return sha256;
}

/** HeadObject response → size and sha256. */
export function infoFromHead(response: Response): BlobInfo {
  return { size: contentLength(response.headers), sha256: metadataSha256(response.headers) };
}

/** The byte span a GetObject response carries: `206` per Content-Range, `200` the whole object. */
function servedSpan(response: Response): { start: number; end: number; total: number } {
  if (response.status !== 206) {
    const total = contentLength(response.headers);
    return { start: 0, end: total - 1, total };
  }
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get("Content-Range") ?? "");
  if (!match) throw new StorageError(DRIVER, "IO", "206 response without a valid Content-Range");
  return { start: Number(match[1]), end: Number(match[2]), total: Number(match[3]) };
}

const emptyStream = () =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.close();
    },
  });

/**
 * GetObject response → the whole blob's info and a body of exactly the requested bytes. The S3
 * body is returned as is when it already is exactly that (the normal case, pull-based); a server
 * that ignored the Range (200) or served more than asked (s3rver answers `bytes=0-0` with the whole
 * object) is trimmed by `sliceStream`. A range past the end throws RangeError, like other drivers.
 */
export function objectFromGet(response: Response, range?: ByteRange): BlobInfo & { body: ReadableStream<Uint8Array> } {
  const body = response.body ?? emptyStream();
  try {
    const sha256 = metadataSha256(response.headers);
    const served = servedSpan(response);
    if (range) checkRange(range, served.total);
    const want = range ?? { start: 0, end: served.total - 1 };
    if (served.total > 0 && (want.start < served.start || want.end > served.end)) {
      throw new StorageError(
        DRIVER,
        "IO",
        `server sent bytes ${served.start}-${served.end} for a request of ${want.start}-${want.end}`,
      );
    }
    const exact = want.start === served.start && want.end === served.end;
    const length = Math.max(0, want.end - want.start + 1);
    return { size: served.total, sha256, body: exact ? body : sliceStream(body, want.start - served.start, length) };
  } catch (err) {
    body.cancel().catch(noop);
    throw err;
  }
}

/** Pull-based view of `length` bytes of `source` after skipping `skip`; cancels the rest. */
export function sliceStream(
  source: ReadableStream<Uint8Array>,
  skip: number,
  length: number,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let toSkip = skip;
  let remaining = length;
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    controller.close();
    reader.cancel().catch(noop); // the over-served tail is not needed
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (remaining > 0) {
          const { done, value } = await reader.read();
          if (done) {
            controller.error(new StorageError(DRIVER, "IO", `object body ended ${remaining} bytes early`));
            return;
          }
          let chunk = value;
          if (toSkip > 0) {
            const n = Math.min(toSkip, chunk.byteLength);
            chunk = chunk.subarray(n);
            toSkip -= n;
          }
          if (chunk.byteLength === 0) continue;
          if (chunk.byteLength > remaining) chunk = chunk.subarray(0, remaining);
          remaining -= chunk.byteLength;
          controller.enqueue(chunk);
          if (remaining === 0) finish(controller);
          return;
        }
        finish(controller);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
