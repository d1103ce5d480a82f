/**
 * A file part that arrived before the fields that say where it belongs: streamed into a staging
 * blob (never held in memory), read back once the fields are known, and deleted either way.
 */
import { ProblemError } from "../../problems.js";
import { type BlobStore, StorageError } from "../../storage/blob-store.js";
import { stagingKey } from "../../storage/staging.js";

export interface StagedFile {
  size: number;
  /** The staged bytes, streamed from storage. */
  open(): Promise<ReadableStream<Uint8Array>>;
  /** Best effort: what a crash leaves behind, the collector removes a day later (storage/staging.ts). */
  drop(): Promise<void>;
}

export async function stageFile(
  blobs: BlobStore,
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  pointer: string,
): Promise<StagedFile> {
  const key = stagingKey("uploads", Date.now());
  let size: number;
  try {
    size = (await blobs.put(key, body, { maxBytes })).size;
  } catch (err) {
    if (err instanceof StorageError && err.code === "TOO_LARGE") {
      const detail = `content larger than ${maxBytes} bytes`;
      throw new ProblemError("PAYLOAD_TOO_LARGE", `the content exceeds the limit of ${maxBytes} bytes`, {
        errors: [{ pointer, detail }],
        cause: err,
      });
    }
    throw err;
  }
  return {
    size,
    async open() {
      const found = await blobs.get(key);
      if (!found) throw new Error(`staged upload ${key} vanished before it was stored`);
      return found.body;
    },
    drop: () => blobs.delete(key).catch(() => {}),
  };
}
