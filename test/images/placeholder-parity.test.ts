/**
 * Issue 38: the thumbhash Node computes (sharp) for the images test/workers/thumbhash.test.ts stores
 * on Workers, so both runtimes are held to the same hashes (test/helpers/thumbhash-images.ts).
 */
import { describe, expect, it } from "vitest";
import { createPlaceholder } from "../../src/images/thumbhash.js";
import { createSharpImages } from "../../src/runtime/host/sharp-images.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import type { BlobKey } from "../../src/storage/blob-store.js";
import { bytesOf, GRADIENT_JPEG, GRADIENT_PNG } from "../helpers/thumbhash-images.js";

describe("the thumbhash Node computes", () => {
  it.each([
    ["PNG", GRADIENT_PNG],
    ["JPEG", GRADIENT_JPEG],
  ])("of the shared %s is the one the Worker must match", async (_, image) => {
    const blobs = createMemoryBlobStore();
    const key = "t/images/parity" as BlobKey;
    await blobs.put(key, new Blob([bytesOf(image.base64)]).stream());
    const placeholder = createPlaceholder(blobs, createSharpImages({ maxPixels: 1_000_000, timeoutSeconds: 10 }));
    expect(await placeholder?.({ key, width: image.width, height: image.height })).toBe(image.nodeThumbhash);
  });
});
