/**
 * "Try it out" of the content operations in real Chromium on the explorer's defaults
 * (explorer-try-it-harness.ts says how), and the response preview of images, video, audio and PDF
 * (from blob: URLs, under the page's CSP).
 */
import sharp from "sharp";
import { expect, it } from "vitest";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";
import { buildZip } from "../helpers/zip-writer.js";
import { describeTryIt, press, type } from "./explorer-try-it-harness.js";

describeTryIt("content", (explorer) => {
  it("runs every content operation (GET, HEAD, by DTO, a package file's parent)", async () => {
    const { expectTry, create } = explorer();
    const text = await create("hello.txt", "text/plain", "hello from the explorer");
    const path = { context: text, path: "hello.txt" };
    for (const id of ["getData", "getDataHead", "getMultiPartData", "getMultiPartDataHead"])
      await expectTry(id, { params: path }, 200);
    await expectTry("getDataUuid", { params: { resourceUID: text } }, 200);
    await expectTry("getDataUuidHead", { params: { resourceUID: text } }, 200);
    await expectTry("getDataByDTO", { json: { resourceUID: text } }, 200);
    // A package: the answer is its first file, whose parent (getParentUuid) is the zip.
    const packageFile = await create(
      "pack.zip",
      "application/zip",
      await buildZip([
        { name: "info.json", data: Buffer.from('{"startpage":"index.txt"}'), method: 0 },
        { name: "index.txt", data: Buffer.from("in a zip"), method: 0 },
      ]),
    );
    await expectTry("getParentUuid", { text: packageFile }, 200);
  });

  it("previews an image, a video, an audio file and a PDF from blob: URLs", async () => {
    const { create, open } = explorer();
    const [png, pdf, audio, video] = await Promise.all([
      create("pixel.png", "image/png", PNG_1x1),
      create("doc.pdf", "application/pdf", tinyPdf()),
      create("tone.wav", "audio/wav", toneWav(1)),
      // No video encoder here: the tone's bytes as a video type; Chromium plays them in <video> all the same.
      create("tone-video.wav", "video/x-wav", toneWav(1)),
    ]);
    const op = await open("getDataUuid");
    const shown = async (uid: string, selector: string) => {
      await type(op.locator('tr[data-param-name="resourceUID"] input'), uid);
      await press(op.locator("button.execute"));
      const element = op.locator(`.live-responses-table ${selector}`).first();
      await element.waitFor({ timeout: 60_000 });
      return element;
    };
    const clear = () => press(op.locator("button.btn-clear"));
    const img = await shown(png, "img");
    await expect
      .poll(() => img.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth), { timeout: 30_000 })
      .toBe(1);
    await clear();
    for (const [uid, tag] of [
      [video, "video"],
      [audio, "audio"],
    ] as const) {
      const media = await shown(uid, tag);
      expect(await media.getAttribute("src")).toMatch(/^blob:/);
      // Loaded: the browser read the bytes through the blob: URL (the CSP let it) and knows the duration.
      await expect
        .poll(() => media.evaluate((e: HTMLMediaElement) => e.duration), { timeout: 30_000 })
        .toBeCloseTo(1, 1);
      await clear();
    }
    const object = await shown(pdf, "object");
    expect(await object.getAttribute("data")).toMatch(/^blob:/);
    expect(await object.getAttribute("type")).toBe("application/pdf");
    await clear();
  });

  it("tries image parameters: getData with width and format shows the resized WebP (issue 30)", async () => {
    const { create, open } = explorer();
    const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#c63" } })
      .png()
      .toBuffer();
    const uid = await create("wide.png", "image/png", png);
    const op = await open("getData");
    await type(op.locator('tr[data-param-name="context"] input'), uid);
    await type(op.locator('tr[data-param-name="path"] input'), "wide.png");
    await type(op.locator('tr[data-param-name="width"] input'), "10");
    await op.locator('tr[data-param-name="format"] select').selectOption("webp");
    await press(op.locator("button.execute"));
    const img = op.locator(".live-responses-table img").first();
    await img.waitFor({ timeout: 60_000 });
    // Decoded by the browser at the size asked for: a 10 × 5 WebP, not the 40 × 20 PNG.
    await expect
      .poll(() => img.evaluate((e: HTMLImageElement) => e.complete && [e.naturalWidth, e.naturalHeight]), {
        timeout: 30_000,
      })
      .toEqual([10, 5]);
    const headers = await op.locator(".live-responses-table .response .response-col_description").first().textContent();
    expect(headers).toContain("image/webp");
    await press(op.locator("button.btn-clear"));
  });
});
