/**
 * The media library's large uploads straight to storage (issue 39, docs/library.md) in a real
 * browser (Debian's Chromium via playwright-core) against the Node server, auth on: a file of
 * DIRECT_UPLOAD_MIN_BYTES goes createUploadURL → PUT to the upload URL → completeUpload, never
 * through tus; the same bytes again send nothing; a server without createUploadURL (its 404 stood
 * in by page.route: no older server runs here) gets the file through tus.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIRECT_UPLOAD_MIN_BYTES } from "../../src/library-client/direct-upload.js";
import { launchChromium } from "../helpers/browser.js";
import { eventually, type LibraryTarget, MAX_RESOURCE_BYTES, openLibraryAs } from "./library-suite.js";
import { nodeTarget } from "./library-targets.js";

const API = "/cms/v1.0";

describe("media library: uploads straight to storage (node-auth-on)", () => {
  let target: LibraryTarget;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const requests: Request[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];

  /** The requests the page made since `from`, as "METHOD path". */
  const made = (from: number) => requests.slice(from).map((r) => `${r.method()} ${new URL(r.url()).pathname}`);
  const statuses = () => page.locator("#uploads li .status").allTextContents();
  let files: string;
  /**
   * Chosen by path, as a user picks a file: as a buffer, playwright sent each 8 MiB to the browser
   * over its pipe (about 8 s of a test's time under load).
   */
  const upload = async (name: string, buffer: Buffer) => {
    const file = join(files, name);
    await writeFile(file, buffer);
    await page.getByLabel("Upload", { exact: true }).setInputFiles(file);
  };

  async function listed(name: string): Promise<{ size: number; sha256: string } | undefined> {
    const token = await target.token();
    const res = await fetch(`${target.baseUrl}${API}/listResources?tenant=${target.tenant}&limit=200`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    const { resources } = (await res.json()) as { resources: { resourceURI: string; size: number; sha256: string }[] };
    return resources.find((r) => r.resourceURI.endsWith(`/${name}`));
  }

  beforeAll(async () => {
    [target, browser, files] = await Promise.all([
      nodeTarget("auth-on")(),
      launchChromium(),
      mkdtemp(join(tmpdir(), "cms-library-direct-")),
    ]);
    context = await browser.newContext();
    page = await context.newPage();
    page.on("request", (req) => requests.push(req));
    page.on("console", (message) => {
      if (/content.security.policy/i.test(message.text())) pageErrors.push(`CSP: ${message.text()}`);
      else if (message.type() === "error") consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await openLibraryAs(page, target);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await target?.close();
    if (files) await rm(files, { recursive: true, force: true });
  });

  // The threshold must fit under the targets' CMS_MAX_RESOURCE_BYTES, or this file could not show it.
  const bytes = randomBytes(DIRECT_UPLOAD_MIN_BYTES);
  it("fits the targets' resource limit", () => {
    expect(DIRECT_UPLOAD_MIN_BYTES).toBeLessThanOrEqual(MAX_RESOURCE_BYTES);
  });

  it("sends a file at the threshold by PUT to its upload URL, not through tus, with progress", async () => {
    const from = requests.length;
    await upload("direct.bin", bytes);
    await eventually(statuses).toEqual(["done"]);
    const calls = made(from);
    expect(calls.filter((c) => c.includes(`${API}/uploads`))).toEqual([]); // no tus
    const put = requests.slice(from).filter((r) => r.method() === "PUT");
    expect(put).toHaveLength(1);
    expect(new URL(put[0]!.url()).pathname).toMatch(new RegExp(`^${API}/directUploads/`));
    expect(put[0]!.headers().authorization).toBeUndefined(); // the URL is its own authorisation
    expect(calls).toContain(`POST ${API}/createUploadURL`);
    expect(calls).toContain(`POST ${API}/completeUpload`);
    expect(await page.locator("#uploads progress").evaluate((p) => (p as HTMLProgressElement).value)).toBe(
      bytes.length,
    );
    // In the list, with its size.
    await eventually(() => page.locator("#resources tbody tr", { hasText: "direct.bin" }).textContent()).toContain(
      "8.0 MiB",
    );
    expect((await listed("direct.bin"))?.size).toBe(bytes.length);
  });

  it("sends nothing for bytes the tenant already stores (method null)", async () => {
    const from = requests.length;
    await upload("direct-again.bin", bytes);
    await eventually(statuses).toEqual(["done", "done"]);
    expect(requests.slice(from).filter((r) => r.method() === "PUT")).toEqual([]);
    expect(made(from)).toContain(`POST ${API}/completeUpload`);
    await eventually(() => page.locator("#resources tbody tr", { hasText: "direct-again.bin" }).count()).toBe(1);
    const again = await listed("direct-again.bin");
    expect(again?.size).toBe(bytes.length);
    expect(again?.sha256).toBe((await listed("direct.bin"))?.sha256);
  });

  it("falls back to tus where the server has no createUploadURL", async () => {
    // An older server: its 404 for the unknown route.
    await page.route(`**${API}/createUploadURL`, (route) =>
      route.fulfill({
        status: 404,
        contentType: "application/problem+json",
        body: JSON.stringify({ type: "about:blank", title: "Not Found", status: 404, code: "NOT_FOUND" }),
      }),
    );
    const from = requests.length;
    await upload("older.bin", randomBytes(DIRECT_UPLOAD_MIN_BYTES));
    await eventually(statuses).toEqual(["done", "done", "done"]);
    await page.unroute(`**${API}/createUploadURL`);
    const calls = made(from);
    expect(calls).toContain(`POST ${API}/uploads`);
    expect(calls).not.toContain(`POST ${API}/completeUpload`);
    expect((await listed("older.bin"))?.size).toBe(DIRECT_UPLOAD_MIN_BYTES);
    // The browser logs the stood-in 404; nothing else.
    expect(consoleErrors.filter((e) => !e.includes("createUploadURL"))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("falls back to tus when the page's CSP refuses the upload URL's origin (a bucket's)", async () => {
    // The real ticket, its URL moved to another origin (localhost: the same server, so nothing leaves
    // the machine) as a bucket's would be: connect-src 'self' stops the PUT before it is sent.
    await page.route(`**${API}/createUploadURL`, async (route) => {
      const answer = await route.fetch();
      const ticket = (await answer.json()) as { url: string | null };
      if (ticket.url) ticket.url = ticket.url.replace("//127.0.0.1:", "//localhost:");
      await route.fulfill({ response: answer, json: ticket });
    });
    const from = requests.length;
    await upload("elsewhere.bin", randomBytes(DIRECT_UPLOAD_MIN_BYTES));
    await eventually(statuses).toEqual(["done", "done", "done", "done"]);
    await page.unroute(`**${API}/createUploadURL`);
    const calls = made(from);
    expect(calls).toContain(`POST ${API}/createUploadURL`);
    expect(calls).toContain(`POST ${API}/uploads`);
    expect(calls).not.toContain(`POST ${API}/completeUpload`);
    expect((await listed("elsewhere.bin"))?.size).toBe(DIRECT_UPLOAD_MIN_BYTES);
    expect(pageErrors.splice(0)).toEqual([expect.stringMatching(/^CSP: .*localhost/)]);
  });

  it("cancels a PUT on its way with the upload's Cancel button", async () => {
    let held: () => void;
    const arrived = new Promise<void>((resolve) => (held = resolve));
    await page.route(`**${API}/directUploads/**`, () => held()); // never answered: the PUT stays on its way
    const from = requests.length;
    await upload("cancelled.bin", randomBytes(DIRECT_UPLOAD_MIN_BYTES));
    await arrived;
    await page.getByRole("button", { name: "Cancel cancelled.bin" }).click();
    await eventually(statuses).toEqual(["done", "done", "done", "done", "cancelled"]);
    await page.unroute(`**${API}/directUploads/**`);
    expect(made(from)).not.toContain(`POST ${API}/completeUpload`);
    expect(await listed("cancelled.bin")).toBeUndefined();
  });

  it("shows a refusal in place (role=alert)", async () => {
    await page.route(`**${API}/completeUpload`, (route) =>
      route.fulfill({
        status: 422,
        contentType: "application/problem+json",
        body: JSON.stringify({
          title: "Unprocessable",
          status: 422,
          code: "DIGEST_MISMATCH",
          detail: "the bytes do not hash to sha256",
        }),
      }),
    );
    await upload("refused.bin", randomBytes(DIRECT_UPLOAD_MIN_BYTES));
    await eventually(() => page.getByRole("alert").filter({ hasText: "refused.bin" }).textContent()).toContain(
      "the bytes do not hash to sha256",
    );
    await page.unroute(`**${API}/completeUpload`);
    expect(await statuses()).toEqual(["done", "done", "done", "done", "cancelled", "failed"]);
  });
});
