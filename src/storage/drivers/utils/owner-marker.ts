/**
 * The owner marker every driver keeps at its store's root (`BlobStore.owner`/`claimOwner`): which
 * deployment — which metadata database — the blobs belong to. A dot-name, so no BlobKey can name,
 * list or overwrite it. Web APIs only.
 */
import { StorageError } from "../../blob-store.js";

/** Name of the marker at the store's root (fs: a file in the volume; S3: under the prefix; R2: in the bucket). */
export const OWNER_MARKER = ".cms-owner";

// Ids go into one line of JSON and into error messages: a plain token, nothing to escape.
const OWNER_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws RangeError unless `id` is a plain token (letters, digits, `_`, `-`; at most 64). */
export function checkOwnerId(id: string): void {
  if (!OWNER_ID.test(id))
    throw new RangeError(`an owner id is 1 to 64 of A-Z a-z 0-9 _ -, not ${JSON.stringify(id.slice(0, 80))}`);
}

/** The marker's bytes: one JSON line, readable by an operator looking at the store. */
export function encodeOwner(id: string): Uint8Array<ArrayBuffer> {
  checkOwnerId(id);
  // Copied into a plain ArrayBuffer: the Workers types let encode() return a shared one.
  return new Uint8Array(new TextEncoder().encode(`${JSON.stringify({ deployment: id })}\n`));
}

/** The deployment id a marker holds; StorageError IO when it is not one this service wrote. */
export function decodeOwner(driver: string, text: string): string {
  let id: unknown;
  try {
    id = (JSON.parse(text) as { deployment?: unknown }).deployment;
  } catch {
    id = undefined;
  }
  if (typeof id !== "string" || !OWNER_ID.test(id)) {
    throw new StorageError(driver, "IO", `the owner marker ${OWNER_MARKER} is damaged (not written by this service?)`);
  }
  return id;
}
