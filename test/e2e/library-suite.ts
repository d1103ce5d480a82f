/**
 * The /library page in a real browser (Debian's Chromium via playwright-core), one suite run against
 * each target (library-targets.ts: Node or workerd, auth off or on; one Chromium for all the targets
 * of a file, a context each): browse with paging, order, search and filters;
 * upload by picker and drag-and-drop through tus with progress, cancel and resume after a reload;
 * the usage bar; previews of image, video, audio (seeking), PDF and text from the content answers;
 * details, signed link, lock/unlock, a new version, revisions with download, delete and purge after
 * a confirmation; axe-core and the keyboard. Screenshots go to test-results/library/ (git-ignored).
 * Every request the page makes must stay on 127.0.0.1.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, BrowserContext, Locator, Page, Response as PageResponse } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { PNG_1x1, recordCanvasWebm, tinyPdf, toneWav } from "../helpers/media-fixtures.js";

/** CMS_MAX_RESOURCE_BYTES of every target (library-targets.ts): over the 4 MiB updateResource took inline, so a refusal can be seen. */
export const MAX_RESOURCE_BYTES = 8 * 1024 * 1024;

/** A PNG of `width` × `height` (one colour: its size is the point, not its bytes). */
const photoPng = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 40, g: 90, b: 160 } } })
    .png()
    .toBuffer();

export interface LibraryTarget {
  baseUrl: string;
  /** The tenant the suite works in (with auth on, one the user's token allows). */
  tenant: string;
  /** A bearer token for seeding through the API; null with auth off. */
  token(): Promise<string | null>;
  /** The IdP user the page logs in as (auth on), else null. */
  user: { name: string; issuer: string } | null;
  /** Auth on: a creator confined to `tenant`, who owns only what it makes (the actions it is offered). */
  creator: { name: string; issuer: string; token(): Promise<string> } | null;
  /** The server transforms images (sharp on Node; workerd here has no Images binding). */
  imageTransforms: boolean;
  close(): Promise<void>;
}

interface AxeViolation {
  id: string;
  impact: string;
  nodes: string[];
}

/** axe-core's violations on `page` as it stands (axe loaded once per document). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(await axeSource);
  return page.evaluate(async () => {
    const run = await (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: { resultTypes: string[] },
          ): Promise<{ violations: { id: string; impact: string; nodes: { target: unknown[] }[] }[] }>;
        };
      }
    ).axe.run(document, { resultTypes: ["violations"] });
    return run.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => String(n.target)) }));
  });
}

/** Logs `name` in at the dev IdP (password = name) from where /library sent the page. */
export async function logIn(page: Page, baseUrl: string, { name, issuer }: { name: string; issuer: string }) {
  await page.waitForURL((url) => url.href.startsWith(issuer));
  await page.fill("#username", name);
  await page.fill("#password", name);
  await Promise.all([page.waitForURL((url) => url.href.startsWith(baseUrl)), page.click("#kc-login")]);
  await page.waitForSelector("#cms-session.on");
  if ((await page.textContent("#cms-user")) !== `Signed in as ${name}`) throw new Error("not signed in");
}

/** Opens /library, through the IdP's login when auth is on, and waits until it lists the target's tenant. */
export async function openLibraryAs(page: Page, target: LibraryTarget) {
  await page.goto(`${target.baseUrl}/library`);
  if (target.user) await logIn(page, target.baseUrl, target.user);
  await page.waitForSelector("body[data-ready]", { timeout: 15_000 });
  if ((await page.inputValue("#tenant")) !== target.tenant) {
    await page.fill("#tenant", target.tenant);
    await page.click("#tenant-form button[type=submit]");
  }
  await page.waitForFunction(
    (tenant) => document.getElementById("resources-caption")?.textContent?.includes(tenant),
    target.tenant,
  );
}

/**
 * Types `name` into the name search and waits for the table as the search draws it: `name` among the
 * rows, and every row starting with it. Not merely a row named so: the list before the search may
 * show one too, and a click aimed at it can land where the redraw leaves no row (seen under
 * stress-ng: details never opened).
 */
export async function searchByName(page: Page, name: string) {
  await page.getByRole("searchbox", { name: "Name starts with" }).fill(name);
  const names = () => page.locator("#resources tbody td.name button").allTextContents();
  await eventually(async () => {
    const shown = await names();
    return shown.includes(name) && shown.every((row) => row.startsWith(name));
  }).toBe(true);
}

export const SHOTS = fileURLToPath(new URL("../../test-results/library/", import.meta.url));
const API = "/cms/v1.0";
const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
export const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000 });
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

interface Created {
  resourceUID: string;
  resourceURI: string;
  sha256: string;
  /** In listResources' items. */
  mediaType?: string;
}

/** The suite once per target, `{ "node-auth-off": start, … }`, all in one Chromium. */
export function describeLibrary(targets: Record<string, () => Promise<LibraryTarget>>) {
  let browser: Promise<Browser> | undefined;
  const chromium = () => (browser ??= launchChromium());
  afterAll(async () => {
    await (await browser)?.close();
  });
  for (const [label, start] of Object.entries(targets)) describeTarget(label, start, chromium);
}

function describeTarget(label: string, start: () => Promise<LibraryTarget>, chromium: () => Promise<Browser>) {
  describe(`media library (${label})`, () => {
    let target: LibraryTarget;
    let context: BrowserContext;
    let page: Page;
    let files: string;
    const external: string[] = [];
    const pageErrors: string[] = [];
    /** Every console error of the page; a test that provokes a refusal takes its own out (expectConsoleErrors). */
    const consoleErrors: { text: string; url: string }[] = [];
    /** Takes the console errors matching `url` out (the browser logs every refused request), and says how many. */
    const expectConsoleErrors = (url: RegExp) => {
      const mine = consoleErrors.filter((e) => url.test(e.url));
      consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !url.test(e.url)));
      return mine.length;
    };
    const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${label}-${name}.png`), fullPage: true });

    async function api(path: string, init: RequestInit = {}): Promise<Response> {
      const token = await target.token();
      return fetch(`${target.baseUrl}${API}/${path}`, {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
      });
    }
    async function create(name: string, type: string, content: Uint8Array | string, author = "Ann"): Promise<Created> {
      const res = await api("createResource", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          resourceAuthor: author,
          resourceName: name,
          resourceMediaType: type,
          resourceTenantId: target.tenant,
          resourceBinary: Buffer.from(content).toString("base64"),
        }),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Created;
    }
    async function listed(query: string): Promise<Created[]> {
      const res = await api(`listResources?tenant=${target.tenant}&limit=200&${query}`);
      return ((await res.json()) as { resources: Created[] }).resources;
    }

    const rowNames = () => page.locator("#resources tbody td.name button").allTextContents();
    const search = (name: string) => searchByName(page, name);
    /** Opens the details of a row the table shows. */
    async function openRow(name: string) {
      await page.locator("#resources tbody button", { hasText: name }).first().click();
      await eventually(() => page.locator("#details-title").textContent()).toBe(name);
      await page.locator("#facts dt").first().waitFor();
      await eventually(() => page.locator("#preview > *").count()).toBe(1);
    }
    /** Seeks a media element to `seconds` once it knows its metadata; resolves where it landed. */
    const seek = (media: Locator, seconds: number) =>
      media.evaluate(
        (element: HTMLMediaElement, to) =>
          new Promise<number>((resolve, reject) => {
            const go = () => {
              element.addEventListener("seeked", () => resolve(element.currentTime), { once: true });
              element.currentTime = to;
            };
            element.addEventListener("error", () => reject(new Error(`media error ${element.error?.code}`)), {
              once: true,
            });
            if (element.readyState >= 1) go();
            else element.addEventListener("loadedmetadata", go, { once: true });
          }),
        seconds,
      );
    async function openDetails(name: string) {
      await search(name);
      await openRow(name);
    }
    async function closeDetails() {
      await page.click("#details-close");
      await page.locator("#details").waitFor({ state: "hidden" });
    }

    const openLibrary = () => openLibraryAs(page, target);

    /** 27 resources for paging: names doc-00…doc-26, authors alternating, every third an image. */
    async function seed() {
      for (let i = 0; i < 27; i++) {
        const image = i % 3 === 0;
        await create(
          `doc-${String(i).padStart(2, "0")}${image ? ".png" : ".txt"}`,
          image ? "image/png" : "text/plain",
          image ? PNG_1x1 : `document ${i}`,
          i % 2 ? "Ben" : "Ann",
        );
      }
    }

    beforeAll(async () => {
      let browser: Browser;
      [target, browser, files] = await Promise.all([
        start(),
        chromium(),
        mkdtemp(join(tmpdir(), "cms-library-")),
        mkdir(SHOTS, { recursive: true }),
      ]);
      context = await browser.newContext({ acceptDownloads: true });
      page = await context.newPage();
      page.on("request", (req) => {
        // The browser's own pages (its PDF viewer: chrome:, chrome-extension:) are not network requests.
        const { protocol, hostname } = new URL(req.url());
        if (["http:", "https:", "ws:", "wss:"].includes(protocol) && hostname !== "127.0.0.1") external.push(req.url());
      });
      page.on("console", (message) => {
        if (/content.security.policy/i.test(message.text())) pageErrors.push(`CSP: ${message.text()}`);
        else if (message.type() === "error") consoleErrors.push({ text: message.text(), url: message.location().url });
      });
      page.on("pageerror", (error) => pageErrors.push(`${page.url()}: ${error.message}`));
      // The first test lists again (a change of page size), so the page may open while the seeds go in.
      await Promise.all([seed(), openLibrary()]);
    }, 120_000);

    // A test that failed with a dialog open must not take the next one down with it.
    beforeEach(async () => {
      for (const id of ["confirm", "details"]) {
        if (await page?.locator(`#${id}[open]`).count()) await page.keyboard.press("Escape");
      }
    });

    afterAll(async () => {
      await context?.close();
      await target?.close();
      if (files) await rm(files, { recursive: true, force: true });
    });

    it("sends the page and its script from this origin under a strict CSP", async () => {
      const res = await fetch(`${target.baseUrl}/library`);
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self';");
      expect(csp).not.toContain("unsafe-inline");
      expect(csp).toContain("frame-ancestors 'none'");
      const script = await fetch(`${target.baseUrl}/library/library.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect((await script.text()).length).toBeGreaterThan(10_000); // the bundle, tus-js-client in it
    });

    it("offers a tenant picker from listTenants: the token's tenants (auth on), every tenant (auth off), with counts", async () => {
      await page.click("#tenant-form button[type=submit]"); // lists again, the seeds in
      const offered = () =>
        page
          .locator("#tenant-list option")
          .evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, (o as HTMLOptionElement).label]));
      // Auth on: the admin is confined to two tenants (press has nothing yet); auth off: every tenant written to.
      await eventually(async () => (await offered()).find(([value]) => value === target.tenant)?.[1]).toMatch(
        new RegExp(`^${target.tenant}: \\d+ resources?, `),
      );
      const values = (await offered()).map(([value]) => value);
      if (target.user) {
        expect(await offered()).toEqual([
          ["press", "press: 0 resources, 0 bytes"],
          [target.tenant, expect.stringMatching(new RegExp(`^${target.tenant}: `))],
        ]);
      } else expect(values).toContain(target.tenant);
      expect(await page.inputValue("#tenant")).toBe(target.tenant);
      await shot("tenant-picker");
      expect(await axeViolations(page)).toEqual([]);
    });

    it("browses a tenant: pages, order, name search, author and type filters", async () => {
      await page.selectOption("#page-size", "25");
      await eventually(async () => (await rowNames()).length).toBe(25);
      expect((await rowNames())[0]).toBe("doc-26.txt"); // newest first by default
      await shot("browse");
      await page.click("#next-page");
      await eventually(rowNames).toEqual(["doc-01.txt", "doc-00.png"]);
      await page.click("#first-page");
      await page.selectOption("#sort", "asc");
      await eventually(async () => (await rowNames())[0]).toBe("doc-00.png");
      await page.getByRole("searchbox", { name: "Name starts with" }).fill("doc-1");
      await expect
        .poll(rowNames)
        .toEqual([...Array(10).keys()].map((i) => `doc-1${i}${i % 3 === 2 ? ".png" : ".txt"}`));
      await page.fill("#search", "");
      await page.fill("#author-filter", "Ben");
      await page.selectOption("#type-filter", "image/*");
      await eventually(rowNames).toEqual(["doc-03.png", "doc-09.png", "doc-15.png", "doc-21.png"]);
      await page.fill("#author-filter", "");
      await page.selectOption("#type-filter", "");
      await page.selectOption("#sort", "desc");
      await page.selectOption("#page-size", "100");
      await eventually(async () => (await rowNames()).length).toBe(27);
    }, 60_000);

    it("uploads by file picker and by drag-and-drop, each with its own progress bar, and shows usage", async () => {
      const picked = randomBytes(30_000); // small: the size is not the point here
      await page.getByLabel("Upload", { exact: true }).setInputFiles([
        { name: "picked.bin", mimeType: "application/octet-stream", buffer: picked },
        { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("picked notes") },
      ]);
      const bars = page.locator("#uploads li");
      await eventually(() => bars.count()).toBe(2);
      await eventually(() => page.locator("#uploads li .status").allTextContents()).toEqual(["done", "done"]);
      expect(
        await page.locator("#uploads progress").evaluateAll((ps) => ps.map((p) => (p as HTMLProgressElement).value)),
      ).toEqual([picked.length, 12]);
      // A file the browser has no type for (no known extension) goes without one: the server
      // stores the type its bytes show.
      const dropped = await page.evaluateHandle(
        (png) => {
          const transfer = new DataTransfer();
          transfer.items.add(new File(["dropped text"], "dropped.txt", { type: "text/plain" }));
          transfer.items.add(new File([new Uint8Array(png)], "scan", { type: "" }));
          return transfer;
        },
        [...PNG_1x1],
      );
      await page.dispatchEvent("#drop-zone", "drop", { dataTransfer: dropped });
      await eventually(() => page.locator("#uploads li .status").allTextContents()).toEqual([
        "done",
        "done",
        "done",
        "done",
      ]);
      await eventually(rowNames).toContain("dropped.txt");
      const [bin] = await listed("namePrefix=picked.bin");
      expect(bin?.sha256).toBe(sha256(picked));
      expect(bin?.mediaType).toBe("application/octet-stream"); // random bytes: no signature
      const [text] = await listed("namePrefix=dropped.txt");
      expect([text?.sha256, text?.mediaType]).toEqual([sha256("dropped text"), "text/plain"]);
      expect((await listed("namePrefix=scan"))[0]?.mediaType).toBe("image/png");
      // The quota's usage: a bar against the limit, and its figures.
      await expect
        .poll(() => page.locator("#usage-bar").evaluate((m) => (m as HTMLMeterElement).value))
        .toBeGreaterThan(picked.length); // the seeds are a few hundred bytes
      expect(await page.textContent("#usage-text")).toMatch(/ of 64 MiB \(\d+ %\)$/);
      await shot("uploads");
      // The README's picture (docs/library.png is a copy of node-auth-on-readme.png): the first screenful.
      await page.screenshot({ path: join(SHOTS, `${label}-readme.png`) });
    }, 60_000);

    it("cancels an upload (the server drops it) and resumes another after a reload", async () => {
      const big = join(files, "big.bin");
      // The page sends 4 MiB a PATCH (CHUNK_BYTES): one chunk and a little makes a second PATCH to hold.
      const bytes = randomBytes(4 * 1024 * 1024 + 1024);
      await writeFile(big, bytes);
      // `allow` PATCHes pass, the next wait for release(): the upload is still running when the test
      // acts. heldOne() resolves once one is held.
      let allow = 0;
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding = () => {};
      const heldOne = () => new Promise<void>((resolve) => (holding = resolve));
      await page.route("**/cms/v1.0/uploads/*", async (route) => {
        if (route.request().method() === "PATCH" && allow-- <= 0) {
          holding();
          await held;
        }
        await route.continue().catch(() => {}); // the page may have gone meanwhile
      });

      // Cancel, the first chunk on its way: tus termination (DELETE); the upload's URL is gone on the server.
      await Promise.all([heldOne(), page.getByLabel("Upload", { exact: true }).setInputFiles(big)]);
      const deleted = page.waitForRequest((r) => r.method() === "DELETE");
      await page.getByRole("button", { name: "Cancel big.bin" }).click();
      const uploadUrl = (await deleted).url();
      await eventually(() => page.locator("#uploads li").last().locator(".status").textContent()).toBe("cancelled");
      const token = await target.token();
      const head = await fetch(uploadUrl, {
        method: "HEAD",
        headers: { "tus-resumable": "1.0.0", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      expect(head.status).toBe(404);

      // Resume: a reload mid-upload (the first chunk stored, the second held), then the same file
      // again continues at the offset the server has.
      allow = 1;
      await Promise.all([heldOne(), page.getByLabel("Upload", { exact: true }).setInputFiles(big)]);
      await page.reload();
      await page.waitForSelector("body[data-ready]");
      expect(await page.textContent("#resumable")).toContain("big.bin");
      await shot("resumable");
      release();
      const requests: string[] = [];
      page.on("request", (r) => {
        if (r.url().includes("/uploads")) requests.push(`${r.method()} ${r.headers()["upload-offset"] ?? ""}`.trim());
      });
      await page.getByLabel("Upload", { exact: true }).setInputFiles(big);
      await expect
        .poll(() => page.locator("#uploads li .status").last().textContent(), { timeout: 30_000 })
        .toBe("done");
      expect(requests[0]).toBe("HEAD");
      expect(requests).not.toContain("POST");
      expect(requests[1]).toBe("PATCH 4194304");
      expect((await listed("namePrefix=big.bin"))[0]?.sha256).toBe(sha256(bytes));
      await page.unroute("**/cms/v1.0/uploads/*");
      expect(await page.textContent("#resumable")).toBe("");
    }, 90_000);

    it("previews images, video and audio with seeking, PDF and text from the sandboxed content answers", async () => {
      const [webm] = await Promise.all([
        page.evaluate(recordCanvasWebm, 20),
        create("pv-pixel.png", "image/png", PNG_1x1),
        create("pv-tone.wav", "audio/wav", toneWav(20)),
        create("pv-paper.pdf", "application/pdf", tinyPdf()),
        create("pv-readme.txt", "text/plain", "Plain text preview"),
        photoPng(2400, 1600).then((png) => create("pv-photo.png", "image/png", png)),
      ]);
      await create("pv-clip.webm", "video/webm", new Uint8Array(webm));
      // Every content answer the previews load, with the range asked for and the answer's CSP.
      const answers: { url: string; range?: string; type?: string; csp: string }[] = [];
      const onResponse = (res: PageResponse) => {
        if (!res.url().includes("/getData/")) return;
        const headers = res.headers();
        answers.push({
          url: res.url(),
          range: res.request().headers().range,
          type: headers["content-type"],
          csp: headers["content-security-policy"] ?? "",
        });
      };
      page.on("response", onResponse);
      const fromContent = (src: string | null) => expect(src).toMatch(/\/cms\/v1\.0\/getData\/[^/]+\//);
      // The five in one listing: each opened from the table as it stands.
      await page.fill("#search", "pv-");
      await eventually(async () => (await rowNames()).length).toBe(6);

      await openRow("pv-pixel.png");
      const img = page.locator("#preview img");
      await eventually(() => img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(1);
      fromContent(await img.getAttribute("src"));
      await closeDetails();

      // A photo-sized image is shown as its display-size derivative (the `preview` preset), not the original.
      const settings = JSON.parse((await page.textContent("#library-settings")) ?? "{}") as {
        previewPreset: string | null;
      };
      expect(settings.previewPreset).toBe(target.imageTransforms ? "preview" : null);
      await page.fill("#search", "pv-photo");
      await eventually(rowNames).toEqual(["pv-photo.png"]);
      await openRow("pv-photo.png");
      await eventually(() => img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(
        target.imageTransforms ? 1024 : 2400,
      );
      const photoSrc = new URL((await img.getAttribute("src")) ?? "", target.baseUrl);
      expect(photoSrc.searchParams.get("preset")).toBe(target.imageTransforms ? "preview" : null);
      const photo = answers.find((a) => a.url.includes("pv-photo.png"));
      expect(photo?.type).toBe(target.imageTransforms ? "image/webp" : "image/png");
      await shot("preview-derivative");
      await closeDetails();
      await page.fill("#search", "pv-");
      await eventually(async () => (await rowNames()).length).toBe(6);

      await openRow("pv-clip.webm");
      const video = page.locator("#preview video");
      await eventually(() => video.evaluate((v) => (v as HTMLVideoElement).videoWidth)).toBe(160);
      fromContent(await video.getAttribute("src"));
      expect(await seek(video, 0.5)).toBeCloseTo(0.5, 1);
      await shot("preview-video");
      await closeDetails();

      await openRow("pv-tone.wav");
      const audio = page.locator("#preview audio");
      fromContent(await audio.getAttribute("src"));
      expect(await seek(audio, 17)).toBeCloseTo(17, 0);
      await closeDetails();

      await openRow("pv-paper.pdf");
      fromContent(await page.locator("#preview iframe").getAttribute("src"));
      await eventually(() => answers.find((a) => a.url.includes("pv-paper.pdf"))?.type).toBe("application/pdf");
      await shot("preview-pdf");
      await closeDetails();

      await openRow("pv-readme.txt");
      const frame = page.frameLocator("#preview iframe");
      await eventually(() => frame.locator("body").textContent()).toBe("Plain text preview");
      expect(await page.locator("#preview iframe").getAttribute("sandbox")).toBe("");
      await closeDetails();
      page.off("response", onResponse);

      // Each from getData's own answer: sandboxed by its CSP, but the PDF (content-policy.ts: a sandbox
      // breaks PDF viewers); the media fetched by byte ranges.
      for (const name of ["pv-pixel.png", "pv-clip.webm", "pv-tone.wav", "pv-paper.pdf", "pv-readme.txt"]) {
        const mine = answers.filter((a) => a.url.includes(name));
        expect(mine.length, name).toBeGreaterThan(0);
        for (const { csp } of mine) expect(/\bsandbox\b/.test(csp), `${name}: ${csp}`).toBe(name !== "pv-paper.pdf");
      }
      for (const name of ["pv-clip.webm", "pv-tone.wav"]) {
        expect(answers.some((a) => a.url.includes(name) && a.range)).toBe(true);
      }
    }, 90_000);

    it("shows details, copies a signed link with the chosen expiry, locks and unlocks", async () => {
      const made = await create("facts.txt", "text/plain", "the facts", "Fay");
      await openDetails("facts.txt");
      const facts = Object.fromEntries(
        await page
          .locator("#facts dt")
          .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
      );
      expect(facts).toMatchObject({
        Type: "text/plain",
        Size: "9 bytes (9 bytes)",
        "SHA-256": sha256("the facts"),
        Author: "Fay",
        Lock: "not locked",
        UID: made.resourceUID,
      });
      expect(facts.Created).toBeTruthy();
      await shot("details");

      await page.selectOption("#link-expiry", "86400");
      await page.click("#copy-link");
      await eventually(() => page.textContent("#link-output")).toContain("signature=");
      const link = new URL(((await page.textContent("#link-output")) ?? "").replace(/^Copied: /, ""));
      const expires = Number(link.searchParams.get("expires"));
      expect(Math.abs(expires - (Date.now() / 1000 + 86400))).toBeLessThan(120);
      expect(link.pathname).toBe(`${API}/getData/${made.resourceURI}`);
      // The link works without a token (fetched here from this server, whatever origin it names).
      const viaLink = await fetch(`${target.baseUrl}${link.pathname}${link.search}`);
      expect([viaLink.status, await viaLink.text()]).toEqual([200, "the facts"]);

      await page.click("#lock-toggle");
      await eventually(() => page.locator("#lock-toggle").textContent()).toBe("Unlock");
      expect(await page.locator("#facts dd").nth(6).textContent()).toMatch(/^locked by .* \(by you, in this browser\)/);
      const query = () =>
        api("queryResourceLock", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ uid: made.resourceUID }),
        });
      expect((await query()).status).toBe(200);
      await page.click("#lock-toggle");
      await eventually(() => page.locator("#lock-toggle").textContent()).toBe("Lock");
      expect((await query()).status).toBe(404);
      await closeDetails();
    }, 60_000);

    it("uploads a new version of any size through tus (past the 4 MiB updateResource took), resumably, and downloads each revision", async () => {
      const made = await create("versioned.txt", "text/plain", "version one");
      await openDetails("versioned.txt");
      // 5 MiB: two PATCHes of CHUNK_BYTES; the second is held while the page reloads, then the same
      // file chosen again continues at the offset the server has.
      const bytes = randomBytes(5 * 1024 * 1024);
      const file = join(files, "v2.bin");
      await writeFile(file, bytes);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let holding = () => {};
      const heldOne = new Promise<void>((resolve) => (holding = resolve));
      let allow = 1;
      await page.route("**/cms/v1.0/uploads/*", async (route) => {
        if (route.request().method() === "PATCH" && allow-- <= 0) {
          holding();
          await held;
          // The reloaded page's PATCH never arrives: the server keeps the first chunk only.
          return route.abort().catch(() => {});
        }
        await route.continue();
      });
      await page.getByLabel("Upload a new version").setInputFiles(file);
      await heldOne;
      await page.reload();
      await page.waitForSelector("body[data-ready]");
      expect(await page.textContent("#resumable")).toContain("v2.bin");
      release();
      await page.unroute("**/cms/v1.0/uploads/*");
      const requests: string[] = [];
      const onRequest = (r: { url(): string; method(): string; headers(): Record<string, string> }) => {
        if (r.url().includes("/uploads")) requests.push(`${r.method()} ${r.headers()["upload-offset"] ?? ""}`.trim());
      };
      page.on("request", onRequest);
      await openDetails("versioned.txt");
      await page.getByLabel("Upload a new version").setInputFiles(file);
      await eventually(() => page.locator("#version-uploads li .status").textContent()).toBe("done");
      page.off("request", onRequest);
      expect(requests).toEqual(["HEAD", "PATCH 4194304"]);
      await eventually(() => page.locator("#revisions li").count()).toBe(2);
      await eventually(() => page.locator("#facts dd").nth(1).textContent()).toBe("5.0 MiB (5242880 bytes)");
      expect((await listed("namePrefix=versioned.txt"))[0]?.sha256).toBe(sha256(bytes));
      await shot("new-version");
      for (const [revision, expected] of [
        [1, sha256("version one")],
        [2, sha256(bytes)],
      ] as const) {
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.getByRole("button", { name: `Download revision ${revision}` }).click(),
        ]);
        expect(sha256(await readFile((await download.path()) as string))).toBe(expected);
      }
      // The lock taken before the reload is still this browser's: released here.
      expect(await page.locator("#lock-toggle").textContent()).toBe("Unlock");
      await page.click("#lock-toggle");
      await eventually(() => page.locator("#lock-toggle").textContent()).toBe("Lock");
      expect(made.resourceUID).toBeTruthy();
      await closeDetails();
    }, 90_000);

    it("shows a refused action's error inside its dialog, announced, never behind it", async () => {
      await create("refused.txt", "text/plain", "small");
      await openDetails("refused.txt");
      // Over CMS_MAX_RESOURCE_BYTES: the tus creation is refused (413) before any byte is sent. Chosen
      // by path: as a buffer, playwright sent the 8 MiB to the browser over its pipe (8 s under load).
      const huge = join(files, "huge.bin");
      await writeFile(huge, Buffer.alloc(MAX_RESOURCE_BYTES + 1));
      await page.getByLabel("Upload a new version").setInputFiles(huge);
      const alert = page.locator("#details #details-error");
      await eventually(() => alert.textContent()).toContain(`larger than the limit of ${MAX_RESOURCE_BYTES} bytes`);
      expect(await alert.isVisible()).toBe(true);
      expect([await alert.getAttribute("role"), await alert.getAttribute("aria-live")]).toEqual(["alert", "assertive"]);
      expect(await page.textContent("#cms-error")).toBe("");
      await shot("details-error");
      expect(await axeViolations(page)).toEqual([]);
      // The one console error is the refused request's own (the browser logs every 4xx).
      expect(expectConsoleErrors(/\/cms\/v1\.0\/uploads$/)).toBe(1);
      // Closing and opening again starts clean.
      await closeDetails();
      await openRow("refused.txt");
      expect(await alert.textContent()).toBe("");
      await closeDetails();
    }, 60_000);

    it("offers only the actions the caller's roles and ownership allow", async () => {
      const visible = async (p: Page) =>
        Object.fromEntries(
          await Promise.all(
            [
              ["lock", "#lock-toggle"],
              ["version", "label[for=version-input]"],
              ["delete", "#delete"],
              ["purge", "#purge"],
            ].map(async ([name, selector]) => [name, await p.locator(selector as string).isVisible()]),
          ),
        );
      const everything = { lock: true, version: true, delete: true, purge: true };
      const theirs = await create("theirs.txt", "text/plain", "made by the admin");
      // The admin (auth on) and anyone with auth off: everything.
      await openDetails("theirs.txt");
      expect(await visible(page)).toEqual(everything);
      await closeDetails();
      if (!target.creator) return; // auth off: no roles, no owners
      // A creator: Lock, new version and Delete on its own resource only; never Purge.
      const res = await fetch(`${target.baseUrl}${API}/createResource`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${await target.creator.token()}` },
        body: JSON.stringify({
          resourceAuthor: "Cleo",
          resourceName: "mine.txt",
          resourceMediaType: "text/plain",
          resourceTenantId: target.tenant,
          resourceBinary: Buffer.from("made by the creator").toString("base64"),
        }),
      });
      expect(res.status).toBe(201);
      const creatorContext = await (await chromium()).newContext();
      const other = await creatorContext.newPage();
      const errors: string[] = [];
      other.on("console", (m) => m.type() === "error" && errors.push(`${m.location().url}: ${m.text()}`));
      other.on("pageerror", (e) => errors.push(e.message));
      try {
        await other.goto(`${target.baseUrl}/library`);
        await logIn(other, target.baseUrl, target.creator);
        await other.waitForSelector("body[data-ready]", { timeout: 15_000 });
        const open = async (name: string) => {
          await searchByName(other, name);
          await other.locator("#resources tbody button", { hasText: name }).first().click();
          await other.locator("#facts dt").first().waitFor();
        };
        await open("theirs.txt");
        await expect
          .poll(() => visible(other), { timeout: 30_000 })
          .toEqual({ lock: false, version: false, delete: false, purge: false });
        await other.screenshot({ path: join(SHOTS, `${label}-creator-theirs.png`), fullPage: true });
        expect(await axeViolations(other)).toEqual([]);
        await other.keyboard.press("Escape");
        await open("mine.txt");
        await expect
          .poll(() => visible(other), { timeout: 30_000 })
          .toEqual({ lock: true, version: true, delete: true, purge: false });
        await other.screenshot({ path: join(SHOTS, `${label}-creator-mine.png`), fullPage: true });
        expect(await axeViolations(other)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await creatorContext.close();
      }
      expect(theirs.resourceUID).toBeTruthy();
    }, 90_000);

    it("deletes and purges only after a confirmation", async () => {
      const doomed = await create("doomed.txt", "text/plain", "bye");
      await openDetails("doomed.txt");
      await page.click("#delete");
      await eventually(() => page.textContent("#confirm-text")).toContain("Delete doomed.txt?");
      await shot("confirm");
      await page.click("#confirm-cancel");
      expect(await listed("namePrefix=doomed.txt")).toHaveLength(1);
      await page.click("#delete");
      await page.click("#confirm-ok");
      await page.locator("#details").waitFor({ state: "hidden" });
      await eventually(() => listed("namePrefix=doomed.txt")).toHaveLength(0);
      await eventually(rowNames).not.toContain("doomed.txt");

      const purged = await create("purged.txt", "text/plain", "gone for good");
      await openDetails("purged.txt");
      await page.click("#purge");
      await page.keyboard.press("Escape"); // Escape answers no
      expect(await listed("namePrefix=purged.txt")).toHaveLength(1);
      await page.click("#purge");
      await page.click("#confirm-ok");
      await page.locator("#details").waitFor({ state: "hidden" });
      await eventually(async () => (await api(`getRevisions/${purged.resourceUID}`)).status).toBe(404);
      // The deleted one keeps its revisions (an admin may still purge it); the purged one has none.
      expect((await api(`getRevisions/${doomed.resourceUID}`)).status).toBe(200);
    }, 60_000);

    it("is keyboard-operable with labelled controls, and axe-core finds nothing serious", async () => {
      expect(await page.getByLabel("Upload", { exact: true }).getAttribute("type")).toBe("file");
      expect(await page.getByRole("searchbox").count()).toBe(2); // full text, and the name prefix
      // Tab reaches the file input; Enter on a name opens its details; Escape closes them.
      await page.locator("#tenant").focus();
      const reached: string[] = [];
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press("Tab");
        reached.push(await page.evaluate(() => document.activeElement?.id ?? ""));
      }
      expect(reached).toContain("file-input");
      expect(reached).toContain("search");
      await page.fill("#search", "facts.txt");
      await eventually(rowNames).toEqual(["facts.txt"]);
      await page.locator("#resources tbody td.name button").focus();
      await page.keyboard.press("Enter");
      await page.locator("#details").waitFor();
      const axeResults = () => axeViolations(page);
      const withDialog = await axeResults();
      await page.keyboard.press("Escape");
      await page.locator("#details").waitFor({ state: "hidden" });
      const page1 = await axeResults();
      const serious = [...withDialog, ...page1].filter((v) => v.impact === "serious" || v.impact === "critical");
      await writeFile(join(SHOTS, `${label}-axe.json`), JSON.stringify({ withDialog, page: page1 }, null, 2));
      expect(serious).toEqual([]);
    }, 60_000);

    it("made no request outside loopback and caused no CSP violation, page error or console error", () => {
      expect(external).toEqual([]);
      expect(pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    });
  });
}
