/**
 * The /library page in a real browser (Debian's Chromium via playwright-core), one suite run against
 * each target (Node or workerd, auth off or on): browse with paging, order, search and filters;
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
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";

export interface LibraryTarget {
  baseUrl: string;
  /** The tenant the suite works in (with auth on, one the user's token allows). */
  tenant: string;
  /** A bearer token for seeding through the API; null with auth off. */
  token(): Promise<string | null>;
  /** The IdP user the page logs in as (auth on), else null. */
  user: { name: string; issuer: string } | null;
  close(): Promise<void>;
}

const SHOTS = fileURLToPath(new URL("../../test-results/library/", import.meta.url));
const API = "/cms/v1.0";
const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/** expect.poll with room for a loaded machine (its default gives up after 1 s). */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000 });
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

interface Created {
  resourceUID: string;
  resourceURI: string;
  sha256: string;
}

export function describeLibrary(label: string, start: () => Promise<LibraryTarget>) {
  describe(`media library (${label})`, () => {
    let target: LibraryTarget;
    let browser: Browser;
    let page: Page;
    let files: string;
    const external: string[] = [];
    const pageErrors: string[] = [];
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
    async function listed(query: string): Promise<{ resourceURI: string; sha256: string; resourceUID: string }[]> {
      const res = await api(`listResources?tenant=${target.tenant}&limit=200&${query}`);
      return ((await res.json()) as { resources: Created[] }).resources;
    }

    const rowNames = () => page.locator("#resources tbody td:first-child button").allTextContents();
    async function search(name: string) {
      await page.getByRole("searchbox", { name: "Name starts with" }).fill(name);
      await eventually(rowNames).toContain(name);
    }
    async function openDetails(name: string) {
      await search(name);
      await page.locator("#resources tbody button", { hasText: name }).first().click();
      await eventually(() => page.locator("#details-title").textContent()).toBe(name);
      await page.locator("#facts dt").first().waitFor();
      await eventually(() => page.locator("#preview > *").count()).toBe(1);
    }
    async function closeDetails() {
      await page.click("#details-close");
      await page.locator("#details").waitFor({ state: "hidden" });
    }

    /** Opens /library, through the IdP's login when auth is on, and waits until the script is wired. */
    async function openLibrary() {
      await page.goto(`${target.baseUrl}/library`);
      if (target.user) {
        const { name, issuer } = target.user;
        await page.waitForURL((url) => url.href.startsWith(issuer));
        await page.fill("#username", name);
        await page.fill("#password", name);
        await Promise.all([page.waitForURL((url) => url.href.startsWith(target.baseUrl)), page.click("#kc-login")]);
        await page.waitForSelector("#cms-session.on");
        if ((await page.textContent("#cms-user")) !== `Signed in as ${name}`) throw new Error("not signed in");
      }
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

    beforeAll(async () => {
      target = await start();
      browser = await launchChromium();
      files = await mkdtemp(join(tmpdir(), "cms-library-"));
      await mkdir(SHOTS, { recursive: true });
      const context = await browser.newContext({ acceptDownloads: true });
      page = await context.newPage();
      page.on("request", (req) => {
        // The browser's own pages (its PDF viewer: chrome:, chrome-extension:) are not network requests.
        const { protocol, hostname } = new URL(req.url());
        if (["http:", "https:", "ws:", "wss:"].includes(protocol) && hostname !== "127.0.0.1") external.push(req.url());
      });
      page.on("console", (message) => {
        if (/content.security.policy/i.test(message.text())) pageErrors.push(`CSP: ${message.text()}`);
      });
      page.on("pageerror", (error) => pageErrors.push(`${page.url()}: ${error.message}`));
      // 27 resources for paging: names doc-00…doc-26, authors alternating, every third an image.
      for (let i = 0; i < 27; i++) {
        const image = i % 3 === 0;
        await create(
          `doc-${String(i).padStart(2, "0")}${image ? ".png" : ".txt"}`,
          image ? "image/png" : "text/plain",
          image ? PNG_1x1 : `document ${i}`,
          i % 2 ? "Ben" : "Ann",
        );
      }
      await openLibrary();
    }, 120_000);

    // A test that failed with a dialog open must not take the next one down with it.
    beforeEach(async () => {
      for (const id of ["confirm", "details"]) {
        if (await page?.locator(`#${id}[open]`).count()) await page.keyboard.press("Escape");
      }
    });

    afterAll(async () => {
      await browser?.close();
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

    it("offers the tenants the token allows (auth on), else the one typed", async () => {
      const offered = await page
        .locator("#tenant-list option")
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
      expect(offered).toEqual(target.user ? [target.tenant, "press"] : []);
      expect(await page.inputValue("#tenant")).toBe(target.tenant);
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
      const picked = randomBytes(300_000);
      await page.getByLabel("Upload", { exact: true }).setInputFiles([
        { name: "picked.bin", mimeType: "application/octet-stream", buffer: picked },
        { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("picked notes") },
      ]);
      const bars = page.locator("#uploads li");
      await eventually(() => bars.count()).toBe(2);
      await eventually(() => page.locator("#uploads li .status").allTextContents()).toEqual(["done", "done"]);
      expect(
        await page.locator("#uploads progress").evaluateAll((ps) => ps.map((p) => (p as HTMLProgressElement).value)),
      ).toEqual([300_000, 12]);
      const dropped = await page.evaluateHandle(() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File(["dropped text"], "dropped.txt", { type: "text/plain" }));
        return transfer;
      });
      await page.dispatchEvent("#drop-zone", "drop", { dataTransfer: dropped });
      await eventually(() => page.locator("#uploads li .status").allTextContents()).toEqual(["done", "done", "done"]);
      await eventually(rowNames).toContain("dropped.txt");
      const [bin] = await listed("namePrefix=picked.bin");
      expect(bin?.sha256).toBe(sha256(picked));
      expect((await listed("namePrefix=dropped.txt"))[0]?.sha256).toBe(sha256("dropped text"));
      // The quota's usage: a bar against the limit, and its figures.
      await expect
        .poll(() => page.locator("#usage-bar").evaluate((m) => (m as HTMLMeterElement).value))
        .toBeGreaterThan(300_000);
      expect(await page.textContent("#usage-text")).toMatch(/ of 64 MiB \(\d+ %\)$/);
      await shot("uploads");
      // The README's picture (docs/library.png is a copy of node-auth-on-readme.png): the first screenful.
      await page.screenshot({ path: join(SHOTS, `${label}-readme.png`) });
    }, 60_000);

    it("cancels an upload (the server drops it) and resumes another after a reload", async () => {
      const big = join(files, "big.bin");
      const bytes = randomBytes(10 * 1024 * 1024);
      await writeFile(big, bytes);
      // Hold every PATCH after the first, so the upload is still running when the test acts.
      let patches = 0;
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      await page.route("**/cms/v1.0/uploads/*", async (route) => {
        if (route.request().method() === "PATCH" && ++patches > 1) await held;
        await route.continue().catch(() => {}); // the page may have gone meanwhile
      });
      const firstChunk = () =>
        page.waitForResponse((r) => r.request().method() === "PATCH" && r.headers()["upload-offset"] === "4194304");

      // Cancel: tus termination (DELETE); the upload's URL is gone on the server.
      await Promise.all([firstChunk(), page.getByLabel("Upload", { exact: true }).setInputFiles(big)]);
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

      // Resume: a reload mid-upload, then the same file again continues at the offset the server has.
      patches = 0;
      await Promise.all([firstChunk(), page.getByLabel("Upload", { exact: true }).setInputFiles(big)]);
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

    it("previews images, video, audio with seeking, PDF and text from the content answers", async () => {
      await create("pixel.png", "image/png", PNG_1x1);
      await create("tone.wav", "audio/wav", toneWav(20));
      await create("paper.pdf", "application/pdf", tinyPdf());
      await create("readme.txt", "text/plain", "Plain text preview");
      // A real WebM, recorded by Chromium itself from a canvas (no video fixture or encoder here).
      const webm = await page.evaluate(async () => {
        const canvas = Object.assign(document.createElement("canvas"), { width: 160, height: 120 });
        const ctx = canvas.getContext("2d") as CanvasRenderingContext2D;
        const recorder = new MediaRecorder(canvas.captureStream(25), { mimeType: "video/webm" });
        const chunks: Blob[] = [];
        recorder.ondataavailable = (e) => chunks.push(e.data);
        const stopped = new Promise((resolve) => (recorder.onstop = resolve));
        recorder.start(100);
        for (let frame = 0; frame < 20; frame++) {
          ctx.fillStyle = `hsl(${frame * 18}, 80%, 50%)`;
          ctx.fillRect(0, 0, 160, 120);
          await new Promise((r) => setTimeout(r, 40));
        }
        recorder.stop();
        await stopped;
        return Array.from(new Uint8Array(await new Blob(chunks).arrayBuffer()));
      });
      await create("clip.webm", "video/webm", new Uint8Array(webm));
      const fromContent = (src: string | null) => expect(src).toMatch(/\/cms\/v1\.0\/getData\/[^/]+\//);

      await openDetails("pixel.png");
      const img = page.locator("#preview img");
      await eventually(() => img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(1);
      fromContent(await img.getAttribute("src"));
      await closeDetails();

      await openDetails("clip.webm");
      const video = page.locator("#preview video");
      await eventually(() => video.evaluate((v) => (v as HTMLVideoElement).videoWidth)).toBe(160);
      fromContent(await video.getAttribute("src"));
      await shot("preview-video");
      await closeDetails();

      await openDetails("tone.wav");
      const ranges: string[] = [];
      page.on("request", (r) => {
        if (r.url().includes("tone.wav") && r.headers().range) ranges.push(r.headers().range as string);
      });
      const seekedTo = await page.locator("#preview audio").evaluate(
        (media: HTMLMediaElement) =>
          new Promise<number>((resolve, reject) => {
            const go = () => {
              media.addEventListener("seeked", () => resolve(media.currentTime), { once: true });
              media.currentTime = 17;
            };
            media.addEventListener("error", () => reject(new Error(`media error ${media.error?.code}`)), {
              once: true,
            });
            if (media.readyState >= 1) go();
            else media.addEventListener("loadedmetadata", go, { once: true });
          }),
      );
      expect(seekedTo).toBeCloseTo(17, 0);
      expect(ranges.length).toBeGreaterThan(0); // fetched by byte ranges
      await closeDetails();

      const pdf = page.waitForResponse((r) => r.url().includes("/getData/") && r.url().includes("paper.pdf"));
      await openDetails("paper.pdf");
      expect((await pdf).headers()["content-type"]).toBe("application/pdf");
      fromContent(await page.locator("#preview iframe").getAttribute("src"));
      await shot("preview-pdf");
      await closeDetails();

      await openDetails("readme.txt");
      const frame = page.frameLocator("#preview iframe");
      await eventually(() => frame.locator("body").textContent()).toBe("Plain text preview");
      expect(await page.locator("#preview iframe").getAttribute("sandbox")).toBe("");
      await closeDetails();
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

    it("uploads a new version and downloads each revision", async () => {
      await create("versioned.txt", "text/plain", "version one");
      await openDetails("versioned.txt");
      await page.getByLabel("Upload a new version").setInputFiles({
        name: "v2.txt",
        mimeType: "text/plain",
        buffer: Buffer.from("version two, longer"),
      });
      await eventually(() => page.locator("#revisions li").count()).toBe(2);
      await eventually(() => page.locator("#facts dd").nth(1).textContent()).toBe("19 bytes (19 bytes)");
      for (const [revision, text] of [
        [1, "version one"],
        [2, "version two, longer"],
      ] as const) {
        const [download] = await Promise.all([
          page.waitForEvent("download"),
          page.getByRole("button", { name: `Download revision ${revision}` }).click(),
        ]);
        expect(await readFile((await download.path()) as string, "utf8")).toBe(text);
      }
      await closeDetails();
    }, 60_000);

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
      expect(await page.getByRole("searchbox").count()).toBe(1);
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
      await page.locator("#resources tbody button").focus();
      await page.keyboard.press("Enter");
      await page.locator("#details").waitFor();
      const axeResults = async () => {
        await page.evaluate(await axeSource);
        return page.evaluate(async () => {
          const run = await (
            window as unknown as {
              axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> };
            }
          ).axe.run();
          return run.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
        });
      };
      const withDialog = await axeResults();
      await page.keyboard.press("Escape");
      await page.locator("#details").waitFor({ state: "hidden" });
      const page1 = await axeResults();
      const serious = [...withDialog, ...page1].filter((v) => v.impact === "serious" || v.impact === "critical");
      await writeFile(join(SHOTS, `${label}-axe.json`), JSON.stringify({ withDialog, page: page1 }, null, 2));
      expect(serious).toEqual([]);
    }, 60_000);

    it("made no request outside loopback and caused no CSP violation or page error", () => {
      expect(external).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  });
}
