/**
 * Staging a put body: a body smaller than one part stays in memory (sent later as one PutObject);
 * a larger one streams as a multipart upload to a temporary key, its hash known only at the end.
 */
import { StorageError, type BlobInfo, type PutOptions } from "../../blob-store.js";
import { deleteQuietly, type S3Client } from "./client.js";
import { DRIVER } from "./errors.js";
import { MeteredBody, PartBuffer } from "./ingest.js";
import { MultipartUpload } from "./multipart.js";

/**
 * CopyObject copies at most 5 GiB (https://docs.aws.amazon.com/AmazonS3/latest/API/API_CopyObject.html),
 * and a staged multipart upload reaches its final key by CopyObject, so that is this driver's
 * object size limit. Enforced while streaming, so an oversized body fails early, not after upload.
 */
export const MAX_OBJECT_BYTES = 5 * 1024 ** 3;

export type Staged =
  | { kind: "inline"; info: BlobInfo; bytes: Uint8Array<ArrayBuffer> }
  | { kind: "temp"; info: BlobInfo; tempKey: string };

export interface StageOptions extends PutOptions {
  partSizeBytes: number;
  maxConcurrentParts: number;
  /** A fresh, unique temporary object key (driver prefix included). */
  tempKey: () => string;
}

function tooLarge(maxBytes: number | undefined): () => StorageError {
  return () =>
    maxBytes !== undefined && maxBytes <= MAX_OBJECT_BYTES
      ? new StorageError(DRIVER, "TOO_LARGE", `upload exceeds the limit of ${maxBytes} bytes`)
      : new StorageError(
          DRIVER,
          "TOO_LARGE",
          `upload exceeds the S3 driver's object limit of ${MAX_OBJECT_BYTES} bytes (5 GiB)`,
        );
}

/**
 * Reads `body` to its end, hashing and counting it, and stages it (see module comment). Memory is
 * bounded by (maxConcurrentParts + 1) parts. On any failure the multipart upload is aborted and
 * the body cancelled; an error raised by the body itself is rethrown as is.
 */
export async function stageBody(
  client: S3Client,
  body: ReadableStream<Uint8Array>,
  options: StageOptions,
): Promise<Staged> {
  const { partSizeBytes, maxConcurrentParts, maxBytes, expectedSha256 } = options;
  const source = new MeteredBody(body, Math.min(maxBytes ?? Infinity, MAX_OBJECT_BYTES), tooLarge(maxBytes));
  try {
    const first = new PartBuffer(partSizeBytes);
    await source.fill(first);
    if (!first.full || (await source.atEnd())) {
      // Checked before anything is sent: a mismatching small body never reaches S3.
      return { kind: "inline", info: source.finish(expectedSha256), bytes: first.bytes() };
    }
    const tempKey = options.tempKey();
    const upload = await MultipartUpload.create(client, tempKey, maxConcurrentParts);
    let completing = false;
    try {
      await upload.add(first.bytes());
      for (;;) {
        const part = new PartBuffer(partSizeBytes, true);
        await source.fill(part);
        if (part.length > 0) await upload.add(part.bytes());
        if (!part.full || (await source.atEnd())) break;
      }
      const info = source.finish(expectedSha256);
      completing = true;
      await upload.complete();
      return { kind: "temp", info, tempKey };
    } catch (err) {
      await upload.abort();
      // A Complete that failed in transit may still have created the temp object.
      if (completing) await deleteQuietly(client, tempKey);
      throw err;
    }
  } catch (err) {
    source.cancel(err);
    throw err;
  }
}
