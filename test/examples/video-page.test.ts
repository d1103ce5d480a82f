/**
 * examples/video.html in Chromium (the heavy lane: vitest.config.ts HEAVY): it plays a video through
 * a signed link from the real server on 127.0.0.1, with auth on. The other examples: examples.test.ts.
 */
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCmsClient, staticToken } from "../../src/client/index.js";
import { type AuthStack, startAuthStack } from "../helpers/auth-stack.js";
import { recordCanvasWebm } from "../helpers/media-fixtures.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));

describe("video.html (auth on: only the signed link lets the browser in)", () => {
  let browser: Browser;
  let stack: AuthStack;
  beforeAll(async () => {
    stack = await startAuthStack({ CMS_LOG_LEVEL: "warn" });
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--autoplay-policy=no-user-gesture-required",
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([browser?.close(), stack?.close()]);
  });

  it("plays a video through a signed link", async () => {
    const page = await browser.newPage();
    page.on("request", (req) => {
      const { protocol, hostname } = new URL(req.url());
      if (!["file:", "about:", "data:", "blob:"].includes(protocol) && hostname !== "127.0.0.1")
        throw new Error(`off-loopback request ${req.url()}`);
    });
    // A real WebM, recorded by Chromium itself from a canvas (no video fixture or encoder here).
    const webm = await page.evaluate(recordCanvasWebm, 40);
    expect(webm.length).toBeGreaterThan(1000);

    const cms = createCmsClient({
      baseUrl: stack.app.baseUrl,
      token: staticToken(await stack.passwordToken("acme-creator")),
    });
    const video = await cms.upload(
      { resourceTenantId: "acme", resourceAuthor: "Ann", resourceName: "clip.webm", resourceMediaType: "video/webm" },
      new Blob([new Uint8Array(webm)]),
    );
    expect((await fetch(stack.app.url(`/cms/v1.0/getData/${video.resourceURI}`))).status).toBe(401);
    const link = await cms.signedLink(video.resourceURI, 600);
    // The link as `cms link` prints it, pasted after ?src= without percent-encoding (its & and ? included).
    expect(link.url).toContain("&");
    await page.goto(`${pathToFileURL(join(EXAMPLES, "video.html")).href}?src=${link.url}`);
    await page.waitForFunction(() => document.body.dataset.state !== "loading", undefined, { timeout: 15_000 });
    expect(await page.textContent("#status")).toBe("Playing.");
    await page.waitForFunction(() => Number(document.body.dataset.time) > 0.2, undefined, { timeout: 15_000 });
    expect(await page.evaluate(() => document.querySelector("video")!.currentSrc)).toBe(link.url);
  }, 60_000);
});
