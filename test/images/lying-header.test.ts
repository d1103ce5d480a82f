/**
 * Issue 41: an AVIF whose header (`ispe`) lies — it claims 64×48 and holds a 2400×2400 frame — is
 * refused from its AV1 sequence header before anything is decoded (libvips' pixel limit believed
 * the claim, and the decode allocated the real frame first: 622 MiB for a 6000×6000 one), and the
 * refusal is remembered per source content, so a repeat never reaches the decoder again. Real
 * sharp, real AVIFs made here, the real memory blob store; the transformer is only counted.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { avifLargestFrame } from "../../src/images/avif-frames.js";
import { createImageDerivatives, DEFAULT_DERIVATIVE_SETTINGS } from "../../src/images/derivatives.js";
import type { ImageTransformer } from "../../src/images/transformer.js";
import { ImageError } from "../../src/images/errors.js";
import { createSharpImages } from "../../src/runtime/host/sharp-images.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { lyingAvif } from "./bomb.js";

const MAX_PIXELS = 4_000_000;
let dir: string;
let lying: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-lying-"));
  lying = await lyingAvif(2400);
}, 60_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

const readerOf = (bytes: Uint8Array) => async (offset: number, length: number) =>
  bytes.subarray(offset, offset + length);

describe("an AVIF's real frame", () => {
  it("is read from its AV1 sequence header, whatever its ispe claims", async () => {
    expect((await sharp(lying).metadata()).width).toBe(64); // what the header claims
    expect(await avifLargestFrame(readerOf(lying))).toEqual({ width: 2400, height: 2400 });
    const honest = await sharp({ create: { width: 30, height: 20, channels: 4, background: "#fff8" } })
      .avif()
      .toBuffer();
    expect(await avifLargestFrame(readerOf(honest))).toEqual({ width: 30, height: 20 });
    // No sequence header where the item's data lies: unknown, so refused (never decoded blind).
    const broken = Buffer.from(lying);
    const mdat = broken.indexOf("mdat", 0, "latin1");
    broken.fill(0, mdat + 4, mdat + 40);
    expect(await avifLargestFrame(readerOf(broken))).toBeUndefined();
  });

  it("over CMS_IMAGE_MAX_PIXELS is refused before decoding (422 IMAGE_TOO_LARGE), from a file or from memory", async () => {
    const images = createSharpImages({ maxPixels: MAX_PIXELS, timeoutSeconds: 30, spoolDir: dir });
    const path = join(dir, "lying.avif");
    await writeFile(path, lying);
    const request = { width: 32, fit: "inside", format: "webp" } as const;
    for (const source of [{ path }, { stream: new Blob([new Uint8Array(lying)]).stream(), size: lying.length }]) {
      const refused = await images.transform(source, request, () => "webp").catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ImageError);
      expect((refused as ImageError).code).toBe("IMAGE_TOO_LARGE");
      expect((refused as ImageError).message).toMatch(/2400×2400/);
    }
    // Within the limit, the same lie is refused as corrupt (the decoder's check), never answered.
    const within = createSharpImages({ maxPixels: 6_000_000, timeoutSeconds: 30, spoolDir: dir });
    const corrupt = await within
      .transform({ path }, request, () => "webp")
      .then((made) => new Response(made.body).arrayBuffer())
      .catch((err: unknown) => err);
    expect((corrupt as ImageError).code).toBe("NOT_TRANSFORMABLE");
  });

  it("a refusal is remembered per source content: a repeat never reaches the decoder", async () => {
    const sharpImages = createSharpImages({ maxPixels: MAX_PIXELS, timeoutSeconds: 30, spoolDir: dir });
    let transforms = 0;
    const counted: ImageTransformer = {
      transform: (...args) => {
        transforms++;
        return sharpImages.transform(...args);
      },
    };
    const blobs = createMemoryBlobStore();
    const sha = "ab".repeat(32);
    const blobKey = parseBlobKey(`t/${"a".repeat(32)}/ab/ab/${sha}`)!;
    await blobs.put(blobKey, new Blob([new Uint8Array(lying)]).stream());
    const source = { blobKey, size: lying.length, sha256: sha, mediaType: "image/avif", name: "x.avif", updatedAt: 0 };
    const images = createImageDerivatives({
      blobs,
      transformer: counted,
      settings: { ...DEFAULT_DERIVATIVE_SETTINGS, maxPixels: MAX_PIXELS },
    });
    const ask = (width: string) =>
      images.derive(source, images.requested((n) => (n === "width" ? width : undefined))!, "").catch((e: unknown) => e);
    expect(((await ask("32")) as ImageError).code).toBe("IMAGE_TOO_LARGE");
    expect(transforms).toBe(1);
    // Again, and with other parameters: the same source content, refused from memory.
    expect(((await ask("32")) as ImageError).code).toBe("IMAGE_TOO_LARGE");
    expect(((await ask("48")) as ImageError).code).toBe("IMAGE_TOO_LARGE");
    expect(transforms).toBe(1);
  });
});
