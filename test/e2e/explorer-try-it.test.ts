/**
 * "Try it out" in real Chromium on the explorer's defaults (explorer-try-it-harness.ts says how),
 * once per kind of form: path parameters with a download, a JSON body, a multipart body with a file,
 * tus (header parameters and a binary body); and the response preview of images, video, audio and
 * PDF (from blob: URLs, under the page's CSP) and of a resized image. What each operation starts
 * with and answers is specified for every operation in-process (test/routes/explorer-try-it.test.ts):
 * the page treats all operations of a kind alike.
 */
import sharp from "sharp";
import { expect, it } from "vitest";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";
import { describeTryIt, press, TENANT, type } from "./explorer-try-it-harness.js";

describeTryIt("one operation per kind of form, and the previews", (explorer) => {
  it("path parameters and a download: a revision's bytes, its number starting as its example", async () => {
    const { tryIt, create } = explorer();
    const resourceUID = await create("history.txt", "text/plain", "revision one");
    const data = await tryIt("getRevisionData", { params: { resourceUID } });
    expect([data.status, data.body]).toEqual([200, "revision one"]);
  });

  it("a JSON body: createResource from a loopback origin", async () => {
    const { expectTry, origin } = explorer();
    const made = await expectTry(
      "createResource",
      {
        json: {
          resourceAuthor: "explorer",
          resourceTenantId: TENANT,
          resourceName: "made.txt",
          resourceMediaType: "text/plain",
          resourceExternalURI: origin.put("made", "made from the explorer"),
        },
      },
      201,
    );
    expect(made.resourceUID).toBeTruthy();
  });

  it("a multipart body with a file: uploadResource", async () => {
    const { expectTry } = explorer();
    const uploaded = await expectTry(
      "uploadResource",
      {
        form: { resourceAuthor: "explorer", resourceTenantId: TENANT },
        file: { name: "upload.png", mimeType: "image/png", buffer: PNG_1x1 },
      },
      201,
    );
    expect(uploaded.sha256).toBeTruthy();
  });

  it("tus: create an upload (only its length typed), then append its bytes from a file", async () => {
    const { expectTry } = explorer();
    const bytes = Buffer.from("sent through tus");
    // Only the length is typed: the protocol version and the metadata start with working values.
    const created = await expectTry("tusCreateUpload", { params: { "upload-length": String(bytes.length) } }, 201);
    const id = /location: \S*\/uploads\/([0-9a-f]{32})/i.exec(created.headers)?.[1] ?? "";
    expect(id, created.headers).not.toBe("");
    const appended = await expectTry(
      "tusAppend",
      { params: { id }, file: { name: "tus.txt", mimeType: "text/plain", buffer: bytes } },
      201,
    );
    expect(appended.size).toBe(bytes.length);
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
