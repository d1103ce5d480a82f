/**
 * The media library's finding and describing (issue 38) in a real browser (Debian's Chromium via
 * playwright-core), run by library-find.test.ts (the Node server) and library-find-workerd.test.ts
 * (the Worker on workerd), auth on (an admin through the dev IdP): the full-text
 * search box with cursor paging, tag chips, the folder tree, the thumbnail grid (ThumbHash placeholder
 * first, then the `preview` derivative), the Description form (a title that persists, a 412 on a
 * concurrent edit), bulk tag/move/delete with per-item failures, stored markup shown as text, and
 * axe-core. Screenshots go to test-results/library/<target>-find-*.png. On workerd here (no Images
 * binding) images have no ThumbHash and the grid shows the originals.
 */
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { axeViolations, eventually, type LibraryTarget, logIn, SHOTS } from "./library-suite.js";

const API = "/cms/v1.0";

/** A PNG with a gradient (so its ThumbHash is not one flat colour). */
const gradientPng = (width: number, height: number) => {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set([(x * 255) / width, (y * 255) / height, 120], (y * width + x) * 3);
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
};

interface Item {
  resourceUID: string;
  resourceURI: string;
  title: string | null;
  tags: string[];
  folder: string;
  metadata: Record<string, unknown>;
  metadataVersion: string;
  thumbhash?: string;
}

/** Markup a stored title, tag or metadata value might hold: it must show as text, never run. */
const HOSTILE_TITLE = `<img src=x onerror="window.__pwned=1">`;
const HOSTILE_TAG = "<b>bold</b>";

export function describeFind(label: string, start: () => Promise<LibraryTarget>) {
  describe(`media library: find and describe (${label})`, () => {
    let target: LibraryTarget;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const external: string[] = [];
    const pageErrors: string[] = [];
    const consoleErrors: { text: string; url: string }[] = [];
    /** Takes the console errors of requests matching `url` out (the browser logs every 4xx), and says how many. */
    const expectConsoleErrors = (url: RegExp) => {
      const mine = consoleErrors.filter((e) => url.test(e.url) || url.test(e.text));
      consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !mine.includes(e)));
      return mine.length;
    };
    const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${label}-find-${name}.png`), fullPage: true });

    async function api(path: string, init: RequestInit = {}): Promise<Response> {
      const token = await target.token();
      return fetch(`${target.baseUrl}${API}/${path}`, {
        ...init,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...init.headers },
      });
    }
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      api(path, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    async function create(
      name: string,
      type: string,
      content: Uint8Array | string,
      fields: object = {},
    ): Promise<Item> {
      const res = await post("createResource", {
        resourceAuthor: "Ann",
        resourceName: name,
        resourceMediaType: type,
        resourceTenantId: target.tenant,
        resourceBinary: Buffer.from(content).toString("base64"),
        ...fields,
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Item;
    }
    const query = async (uid: string) => {
      const res = await post("queryResource", { queryUID: uid });
      expect(res.status).toBe(200);
      return (await res.json()) as Item;
    };

    const rowNames = () => page.locator("#resources tbody td.name button").allTextContents();
    const sorted = async () => (await rowNames()).sort();
    const searchFor = (text: string) => page.getByRole("searchbox", { name: "Search", exact: true }).fill(text);
    /**
     * Runs `act`, then waits until the list was drawn again: each draw replaces the rows, so none of
     * the rows marked before is left. For a filter whose list reads the same as before it, so a
     * row's button is not clicked just before the row is replaced (the click is then lost).
     */
    const redrawnAfter = async (act: () => Promise<void>) => {
      await page.locator("#resources tbody tr").evaluateAll((rows) => {
        for (const row of rows) row.setAttribute("data-drawn-before", "");
      });
      await act();
      await eventually(() => page.locator("#resources tbody tr[data-drawn-before]").count()).toBe(0);
    };

    let harbour1: Item;
    let harbour2: Item;
    let notes: Item;
    let hostile: Item;

    /**
     * The resources the tests find. hostile.txt (top level) before the batch: the top level's newest
     * page of 25 is all batch. Each group goes in at once (one after another, the 32 took seconds).
     */
    async function seed() {
      const [photo, small] = await Promise.all([gradientPng(1600, 1200), gradientPng(300, 200)]);
      [harbour1, harbour2, notes, , hostile] = await Promise.all([
        create("harbour-1.png", "image/png", photo, {
          title: "Harbour at dawn",
          tags: ["boats", "sea"],
          folder: "/photos/2026/",
        }),
        create("harbour-2.png", "image/png", small, { tags: ["boats"], folder: "/photos/" }),
        create("notes.txt", "text/plain", "the minutes", { title: "Meeting notes", folder: "/docs/" }),
        create("paper.pdf", "application/pdf", "%PDF-1.4\n%%EOF\n", { folder: "/docs/" }),
        create("hostile.txt", "text/plain", "hostile", {
          title: HOSTILE_TITLE,
          tags: [HOSTILE_TAG],
          metadata: { note: "<script>window.__pwned=2</script>" },
        }),
      ]);
      // 27 with one tag: more than a page of 25.
      await Promise.all(
        [...Array(27).keys()].map((i) =>
          create(`batch-${String(i).padStart(2, "0")}.txt`, "text/plain", `b${i}`, { tags: ["batch"] }),
        ),
      );
    }

    /** Opens /library, through the IdP's login when auth is on, until it lists the target's tenant. */
    async function openLibrary() {
      await page.goto(`${target.baseUrl}/library`);
      if (target.user) await logIn(page, target.baseUrl, target.user);
      await page.waitForSelector("body[data-ready]", { timeout: 15_000 });
      await page.waitForFunction(
        (tenant) => document.getElementById("resources-caption")?.textContent?.includes(tenant),
        target.tenant,
      );
    }

    beforeAll(async () => {
      [target, browser] = await Promise.all([start(), launchChromium()]);
      context = await browser.newContext();
      page = await context.newPage();
      page.on("request", (req) => {
        const { protocol, hostname } = new URL(req.url());
        if (["http:", "https:"].includes(protocol) && hostname !== "127.0.0.1") external.push(req.url());
      });
      page.on("console", (message) => {
        if (/content.security.policy/i.test(message.text())) pageErrors.push(`CSP: ${message.text()}`);
        else if (message.type() === "error") consoleErrors.push({ text: message.text(), url: message.location().url });
      });
      page.on("pageerror", (error) => pageErrors.push(error.message));

      await Promise.all([seed(), openLibrary()]);
      // Computed at ingest where the runtime decodes images (sharp on Node), else absent.
      if (target.imageTransforms) expect(harbour1.thumbhash).toMatch(/^[A-Za-z0-9+/]+=*$/);
      else expect(harbour1.thumbhash).toBeUndefined();
      // The page opened while the seeds went in: listed again (the tree too), and drawn, all of them in.
      await page.click("#tenant-form button[type=submit]");
      await page.waitForFunction(
        () =>
          document.getElementById("resources-caption")?.textContent?.includes("(25 shown, more on the next page)") &&
          [...document.querySelectorAll("#folder-tree > li > button[data-path]")].map((b) => b.textContent).join() ===
            "docs (2),photos (1)",
        undefined,
        { timeout: 30_000 },
      );
    }, 120_000);

    beforeEach(async () => {
      for (const id of ["confirm", "details"])
        if (await page?.locator(`#${id}[open]`).count()) await page.keyboard.press("Escape");
    });

    afterAll(async () => {
      await context?.close();
      await browser?.close();
      await target?.close();
    });

    it("narrows the list with the search box, and pages the hits by cursor", async () => {
      await searchFor("harbour");
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await searchFor("dawn"); // a title's word
      await eventually(rowNames).toEqual(["harbour-1.png"]);
      // Name and author are listResources' filters: resting while searching.
      expect(await page.locator("#search").isDisabled()).toBe(true);
      await searchFor("batch");
      await eventually(async () => (await rowNames()).length).toBe(25);
      const firstPage = await rowNames();
      const searches: string[] = [];
      page.on("request", (r) => r.url().includes("/searchResources") && searches.push(r.url()));
      await page.click("#next-page");
      await eventually(async () => (await rowNames()).length).toBe(2);
      expect(new URL(searches[0] ?? "").searchParams.get("cursor")).toBeTruthy();
      expect([...firstPage, ...(await rowNames())].sort()).toEqual(
        [...Array(27).keys()].map((i) => `batch-${String(i).padStart(2, "0")}.txt`),
      );
      expect(await page.locator("#next-page").isDisabled()).toBe(true);
      await searchFor("");
      await eventually(async () => (await rowNames()).length).toBe(25);
      expect(await page.locator("#search").isDisabled()).toBe(false);
    }, 60_000);

    it("filters by a tag chip, and removes the filter from its chip", async () => {
      await searchFor("harbour");
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await searchFor("");
      await page.getByRole("searchbox", { name: "Name starts with" }).fill("harbour-1");
      await eventually(rowNames).toEqual(["harbour-1.png"]);
      // The same one row with the tag filter as without it: wait for its own drawing.
      await redrawnAfter(() => page.getByRole("button", { name: "Filter by tag sea" }).click());
      await eventually(() => page.locator("#active-filters button").allTextContents()).toEqual(["tag: sea ×"]);
      await eventually(rowNames).toEqual(["harbour-1.png"]);
      await page.getByRole("button", { name: "Filter by tag boats" }).click();
      await page.getByRole("button", { name: "Remove tag filter sea" }).click();
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]); // boats alone; the name prefix rests
      await shot("tag-chip");
      await page.getByRole("button", { name: "Remove tag filter boats" }).click();
      await eventually(() => page.locator("#active-filters button").count()).toBe(0);
      await page.fill("#search", "");
      await eventually(async () => (await rowNames()).length).toBe(25);
    }, 60_000);

    it("shows the folder tree with counts, opens subfolders lazily, and filters by the folder chosen", async () => {
      const tree = page.locator("#folder-tree");
      await eventually(() => tree.locator(":scope > li > button[data-path]").allTextContents()).toEqual([
        "docs (2)",
        "photos (1)",
      ]);
      const asked: string[] = [];
      page.on(
        "request",
        (r) => r.url().includes("/folders?") && asked.push(new URL(r.url()).searchParams.get("parent") ?? ""),
      );
      await page.getByRole("button", { name: "photos (1)" }).click();
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]); // with subfolders
      await page.getByLabel("Include subfolders").uncheck();
      await eventually(rowNames).toEqual(["harbour-2.png"]);
      expect(asked).not.toContain("/photos/");
      await page.getByRole("button", { name: "Subfolders of /photos/" }).click();
      await eventually(() => asked).toContain("/photos/");
      await page.getByRole("button", { name: "2026 (1)" }).click();
      await eventually(rowNames).toEqual(["harbour-1.png"]);
      expect(await page.getByRole("button", { name: "2026 (1)" }).getAttribute("aria-pressed")).toBe("true");
      await shot("folders");
      // Top level only: folder=/ never recursive; relevance is offered while there is search text.
      const searched: URL[] = [];
      page.on("request", (r) => r.url().includes("/searchResources") && searched.push(new URL(r.url())));
      await page.getByRole("button", { name: "Top level only" }).click();
      await eventually(() => searched.at(-1)?.searchParams.get("folder")).toBe("/");
      expect(searched.at(-1)?.searchParams.has("recursive")).toBe(false);
      await eventually(async () => (await rowNames()).every((name) => name.startsWith("batch-"))).toBe(true);
      expect(await page.locator("#sort-relevance").isDisabled()).toBe(true);
      await page.getByRole("button", { name: "All folders" }).click();
      await searchFor("harbour");
      await eventually(() => page.locator("#sort-relevance").isDisabled()).toBe(false);
      await page.selectOption("#sort", "relevance");
      await eventually(() => searched.at(-1)?.searchParams.get("sort")).toBe("relevance");
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await page.selectOption("#sort", "desc");
      await searchFor("");
      await page.getByRole("button", { name: "All folders" }).click();
      await page.getByLabel("Include subfolders").check();
      await eventually(async () => (await rowNames()).length).toBe(25);
      expect(await page.locator("#active-filters").textContent()).toBe("");
    }, 60_000);

    it("paints the ThumbHash placeholder first, then the preview derivative; other types as an icon", async () => {
      // harbour-1's image is held until the grid has been seen without it.
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      const hold = async (route: Route) => {
        await held;
        await route.continue().catch(() => {});
      };
      const image = /\/getData\/[^?]*harbour-1\.png/;
      await page.route(image, hold);
      await searchFor("harbour");
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await page.getByRole("button", { name: "Thumbnails" }).click();
      const img = page.locator(`#grid li[data-uid="${harbour1.resourceUID}"] img`);
      if (target.imageTransforms) {
        await eventually(() => img.getAttribute("data-state")).toBe("placeholder");
        expect(await img.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
        expect(await img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
        await shot("grid-placeholder");
      } else {
        // No ThumbHash: nothing painted until the image arrives.
        await eventually(() => img.getAttribute("data-state")).toBe("loading");
        expect(await img.getAttribute("src")).toBeNull();
      }
      release();
      await eventually(() => img.getAttribute("data-state")).toBe("loaded");
      const src = new URL((await img.getAttribute("src")) ?? "", target.baseUrl);
      expect(src.pathname).toContain("/getData/");
      expect(src.searchParams.get("preset")).toBe(target.imageTransforms ? "preview" : null);
      // The derivative within 1024 × 1024 where the server transforms; else the original.
      expect(await img.evaluate((i) => (i as HTMLImageElement).naturalWidth)).toBe(
        target.imageTransforms ? 1024 : 1600,
      );
      await page.unroute(image, hold);
      // A text file: an icon of its type, no image.
      await searchFor("notes");
      await eventually(() => page.locator("#grid li").count()).toBe(1);
      expect(await page.locator("#grid li .type-icon").textContent()).toBe("TXT");
      expect(await page.locator("#grid li img").count()).toBe(0);
      await shot("grid");
      expect(await axeViolations(page)).toEqual([]);
      // Keyboard: the thumbnail is a button; Enter opens the details.
      await page.getByRole("button", { name: "Open notes.txt" }).focus();
      await page.keyboard.press("Enter");
      await eventually(() => page.locator("#details-title").textContent()).toBe("notes.txt");
      await page.keyboard.press("Escape");
      await page.getByRole("button", { name: "List", exact: true }).click();
      await eventually(rowNames).toEqual(["notes.txt"]);
    }, 60_000);

    /** Opens `name`'s details from a search for it, its description shown and editable. */
    async function openDetails(name: string) {
      const query = name.replace(/\.\w+$/, "");
      // Clicked only on a row of the search's own list: a click on a row the search is replacing
      // lands on whatever row is drawn there next (seen under load: another resource's details).
      if ((await page.inputValue("#search")) !== query) await redrawnAfter(() => searchFor(query));
      await eventually(async () => (await rowNames()).includes(name)).toBe(true);
      await page.locator("#resources tbody td.name button", { hasText: name }).first().click();
      await eventually(() => page.locator("#details-title").textContent()).toBe(name);
      await eventually(() => page.locator("#describe-save").isVisible()).toBe(true);
    }

    it("edits title, alt text, tags, folder and metadata; the change persists after a reload", async () => {
      await openDetails("notes.txt");
      expect(await page.inputValue("#d-title")).toBe("Meeting notes");
      await page.getByLabel("Title", { exact: true }).fill("Minutes of the meeting");
      await page.getByLabel("Alt text").fill("Scanned minutes");
      await page.getByLabel("Tags (comma-separated)").fill("work, minutes, Work");
      await page.getByLabel("Folder", { exact: true }).fill("docs/2026");
      // Not an object: refused in place, nothing sent.
      await page.getByLabel("Metadata (a JSON object)").fill("[1, 2]");
      await page.getByRole("button", { name: "Save description" }).click();
      await eventually(() => page.textContent("#describe-error")).toBe("Metadata must be a JSON object ({…}).");
      expect((await query(notes.resourceUID)).title).toBe("Meeting notes");
      await page.getByLabel("Metadata (a JSON object)").fill('{"rating": 5, "by": {"name": "Ann"}}');
      await page.getByRole("button", { name: "Save description" }).click();
      await eventually(() => page.textContent("#describe-status")).toBe("Saved.");
      await shot("describe");
      const stored = await query(notes.resourceUID);
      expect(stored).toMatchObject({
        title: "Minutes of the meeting",
        tags: ["work", "minutes"],
        folder: "/docs/2026/",
        metadata: { rating: 5, by: { name: "Ann" } },
      });
      // A key taken out of the JSON is removed (the merge patch says null for it).
      await page.getByLabel("Metadata (a JSON object)").fill('{"by": {}}');
      await page.getByRole("button", { name: "Save description" }).click();
      await eventually(async () => (await query(notes.resourceUID)).metadata).toEqual({ by: {} });

      await page.reload();
      await page.waitForSelector("body[data-ready]");
      await openDetails("notes.txt");
      expect(await page.inputValue("#d-title")).toBe("Minutes of the meeting");
      expect(await page.inputValue("#d-alt")).toBe("Scanned minutes");
      expect(await page.inputValue("#d-tags")).toBe("work, minutes");
      expect(await page.inputValue("#d-folder")).toBe("/docs/2026/");
      expect(JSON.parse(await page.inputValue("#d-metadata"))).toEqual({ by: {} });
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.press("Escape");
    }, 60_000);

    it("shows a 412 in the dialog when someone else saved meanwhile, and reloads the current description", async () => {
      await openDetails("harbour-2.png");
      const before = await query(harbour2.resourceUID);
      const elsewhere = await post(
        "updateResourceMetadata",
        { resourceUID: harbour2.resourceUID, patch: { title: "Changed elsewhere" } },
        { "if-match": `"${before.metadataVersion}"` },
      );
      expect(elsewhere.status).toBe(200);
      await page.getByLabel("Title", { exact: true }).fill("Mine");
      await page.getByRole("button", { name: "Save description" }).click();
      const alert = page.locator("#describe-error");
      await eventually(() => alert.textContent()).toContain("changed meanwhile");
      expect([await alert.getAttribute("role"), await alert.isVisible()]).toEqual(["alert", true]);
      expect([await page.textContent("#cms-error"), await page.textContent("#details-error")]).toEqual(["", ""]);
      expect((await query(harbour2.resourceUID)).title).toBe("Changed elsewhere"); // nothing overwritten
      expect(expectConsoleErrors(/412|updateResourceMetadata/)).toBe(1);
      await shot("describe-412");
      await page.getByRole("button", { name: "Reload the current description" }).click();
      await eventually(() => page.inputValue("#d-title")).toBe("Changed elsewhere");
      expect(await alert.textContent()).toBe("");
      expect(await page.locator("#describe-reload").isVisible()).toBe(false);
      await page.keyboard.press("Escape");
    }, 60_000);

    it("shows stored markup as text: titles, tags and metadata never become elements", async () => {
      await searchFor("hostile");
      await eventually(rowNames).toEqual(["hostile.txt"]);
      const row = page.locator(`#resources tr[data-uid="${hostile.resourceUID}"]`);
      expect(await row.locator(".title").textContent()).toBe(HOSTILE_TITLE);
      expect(await row.locator("img, b, script").count()).toBe(0);
      expect(await row.getByRole("button", { name: `Filter by tag ${HOSTILE_TAG}` }).textContent()).toBe(HOSTILE_TAG);
      await page.getByRole("button", { name: "Thumbnails" }).click();
      expect(await page.locator("#grid li .name").textContent()).toBe(HOSTILE_TITLE);
      expect(await page.locator("#grid img, #grid b").count()).toBe(0);
      await page.getByRole("button", { name: "List", exact: true }).click();
      await openDetails("hostile.txt");
      expect(await page.inputValue("#d-title")).toBe(HOSTILE_TITLE);
      expect(JSON.parse(await page.inputValue("#d-metadata"))).toEqual({ note: "<script>window.__pwned=2</script>" });
      expect(await page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
      await shot("hostile");
      await page.keyboard.press("Escape");
    }, 60_000);

    it("tags, moves and deletes the selected resources, reporting each failure", async () => {
      await searchFor("harbour");
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await page.getByLabel("Select all on this page").check();
      await eventually(() => page.textContent("#selected-count")).toBe("2 selected");
      await page.getByLabel("Move to folder").fill("/archive/2026/");
      await page.getByRole("button", { name: "Move selected" }).click();
      await eventually(() => page.locator("#bulk-results li").first().textContent()).toBe("Moved 2 of 2.");
      expect((await query(harbour1.resourceUID)).folder).toBe("/archive/2026/");
      expect((await query(harbour2.resourceUID)).folder).toBe("/archive/2026/");
      await eventually(() => page.locator("#folder-tree > li > button[data-path]").allTextContents()).toContain(
        "archive (0)",
      );

      // One of them locked by someone else (a lock this browser does not hold): reported, not tried.
      const locked = await post("lockResourceDTO", { resourceUID: harbour2.resourceUID, author: "Bob" });
      expect(locked.status).toBe(200);
      const lock = (await locked.json()) as { lockID: string; author: string };
      await eventually(sorted).toEqual(["harbour-1.png", "harbour-2.png"]);
      await page.getByLabel("Select all on this page").check();
      await page.getByLabel("Tags (+add -remove)").fill("+featured -boats");
      await page.getByRole("button", { name: "Tag selected" }).click();
      await eventually(() => page.locator("#bulk-results li").allTextContents()).toEqual([
        "Tagged 1 of 2.",
        "harbour-2.png: locked by Bob",
      ]);
      expect((await query(harbour1.resourceUID)).tags).toEqual(["sea", "featured"]);
      expect((await query(harbour2.resourceUID)).tags).toEqual(["boats"]);
      await eventually(() => page.textContent("#selected-count")).toBe("1 selected"); // the failed one stays selected
      await shot("bulk");
      expect((await post("unlockResourceDTO", { resourceUID: harbour2.resourceUID, ...lock })).status).toBe(204);

      // Delete, after a confirmation: the second page of the batch.
      await searchFor("batch");
      await eventually(async () => (await rowNames()).length).toBe(25);
      await page.click("#next-page");
      await eventually(async () => (await rowNames()).length).toBe(2);
      const doomed = await rowNames();
      await page.getByLabel("Select all on this page").check();
      await page.getByRole("button", { name: "Delete selected" }).click();
      await eventually(() => page.textContent("#confirm-text")).toBe(
        "Delete 2 resources? An admin can still purge them.",
      );
      await page.click("#confirm-ok");
      await eventually(() => page.locator("#bulk-results li").allTextContents()).toEqual(["Deleted 2 of 2."]);
      await eventually(async () => (await rowNames()).length).toBe(25);
      expect(await rowNames()).not.toContain(doomed[0]);
      expect(await page.locator("#bulk-tag").isDisabled()).toBe(true); // nothing selected
      expect(await axeViolations(page)).toEqual([]);
      await searchFor("");
    }, 90_000);

    it("made no request outside loopback and caused no CSP violation, page error or console error", () => {
      expect(external).toEqual([]);
      expect(pageErrors).toEqual([]);
      expect(consoleErrors).toEqual([]);
    });
  });
}
