/**
 * The API explorer in a real browser (Debian's Chromium via playwright-core): with auth on, the
 * page sends the user to the dev IdP's login (authorization code + PKCE), comes back, and requests
 * made from Swagger UI carry the token: a creator creates a resource (201), a consumer gets 403.
 * Everything is on 127.0.0.1; Chromium's background networking is off (no traffic elsewhere).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIdp, startIdp } from "../../scripts/idp/server.js";
import { launchChromium, logIntoExplorer } from "../helpers/browser.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { press, type } from "./explorer-try-it-harness.js";
import { bindLoopback, startTestApp, type TestApp } from "../helpers/test-app.js";

let idp: RunningIdp;
let app: TestApp;
let origin: Origin;
let browser: Browser;
let shots: string;
const external: string[] = [];
/** Console messages and page errors about the Content-Security-Policy (the pages must cause none). */
const cspViolations: string[] = [];

beforeAll(async () => {
  // Chromium, the origin and the temp dir while the IdP and the app start (each waited for in turn,
  // they added up to seconds on a loaded machine).
  const stack = (async () => {
    // The app's socket is bound first (port 0), so the IdP can name its origin: no port probed.
    const bound = await bindLoopback();
    idp = await startIdp({ port: 0, appOrigins: [bound.url], log: () => {} });
    app = await startTestApp(
      { CMS_PORT: String(bound.port), CMS_AUTH_ENABLED: "true", CMS_AUTH_ISSUER: idp.issuer },
      { listenOn: bound },
    );
  })();
  // Each kept as it comes, so afterAll closes what started even if another part failed.
  await Promise.all([
    startOrigin().then((started) => (origin = started)),
    launchChromium().then((started) => (browser = started)),
    // Screenshots go to E2E_SCREENSHOTS when set (to look at them), else to a temp dir removed after.
    (async () => (shots = process.env.E2E_SCREENSHOTS ?? (await mkdtemp(join(tmpdir(), "cms-e2e-")))))(),
    stack,
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await origin?.close();
  await app?.close();
  await idp?.close();
  if (shots && !process.env.E2E_SCREENSHOTS) await rm(shots, { recursive: true, force: true });
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  // Every request the page makes must stay on loopback (self-hosted assets, local IdP).
  page.on("request", (req) => {
    const host = new URL(req.url()).hostname;
    if (host !== "127.0.0.1" && host !== "localhost") external.push(req.url());
  });
  page.on("console", (message) => {
    if (/content.security.policy/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => cspViolations.push(`${page.url()}: ${error.message}`));
  return page;
}

const logIn = (page: Page, user: string, path = "/swagger-ui.html") =>
  logIntoExplorer(page, app.url(path), idp.issuer, user);

async function createFromExplorer(page: Page, name: string): Promise<{ status: number; body: string }> {
  const op = page.locator("#operations-resources-createResource");
  // Pressed as the try-it harness does (press, type): Playwright's waits for a stable, unobscured
  // target made up most of a click's time on a loaded machine.
  await press(op.locator(".opblock-summary-control"));
  await press(op.locator("button.try-out__btn"));
  const body = {
    resourceAuthor: "browser",
    resourceExternalURI: origin.put(name, `made from the explorer: ${name}`),
    resourceMediaType: "text/plain",
    resourceName: `${name}.txt`,
    resourceTenantId: "browser",
  };
  await type(op.locator("textarea.body-param__text"), JSON.stringify(body, null, 2));
  await press(op.locator("button.execute"));
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor({ timeout: 60_000 });
  return {
    status: Number((await status.textContent())?.trim().slice(0, 3)),
    body: (await op.locator(".live-responses-table .response-col_description pre").first().textContent()) ?? "",
  };
}

describe("API explorer with auth on", () => {
  it("sends its pages with a CSP that forbids framing", async () => {
    for (const path of ["/swagger-ui.html", "/docs"]) {
      const csp = (await fetch(app.url(path))).headers.get("content-security-policy") ?? "";
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    }
  });

  it("logs a creator in through the IdP and creates a resource from the page (201)", async () => {
    const page = await newPage();
    await logIn(page, "cms-creator");
    const result = await createFromExplorer(page, "by-creator");
    await page.screenshot({ path: join(shots, "creator.png"), fullPage: false });
    expect(result.status).toBe(201);
    const { resourceURI } = JSON.parse(result.body) as { resourceURI: string };
    const row = await app.deps.store.findByUid(resourceURI.split("/")[0] as string);
    expect(row?.owner).toBe("cms-creator");
    await page.context().close();
  }, 180_000);

  // At /docs (the creator's test uses /swagger-ui.html): one login shows both the listing there and the 403.
  it("lists the operations at /docs under its CSP, and shows a consumer 403 for the same request", async () => {
    const page = await newPage();
    await logIn(page, "cms-consumer", "/docs");
    await page.locator("#operations-resources-createResource").waitFor({ timeout: 60_000 });
    expect(await page.locator(".opblock").count()).toBeGreaterThan(20);
    const result = await createFromExplorer(page, "by-consumer");
    await page.screenshot({ path: join(shots, "consumer.png"), fullPage: false });
    expect(result.status).toBe(403);
    expect(result.body).toContain("FORBIDDEN");
    await page.context().close();
  }, 180_000);

  it("refuses a wrong password on the login page", async () => {
    const page = await newPage();
    await page.goto(app.url("/swagger-ui.html"));
    await page.waitForURL((url) => url.href.startsWith(idp.issuer));
    await page.fill("#username", "cms-creator");
    await page.fill("#password", "wrong");
    await page.click("#kc-login");
    await page.waitForLoadState();
    expect(page.url().startsWith(idp.issuer)).toBe(true);
    expect(await page.locator("#cms-session").count()).toBe(0);
    await page.context().close();
  }, 180_000);

  it("made no request outside loopback", () => {
    expect(external).toEqual([]);
  });

  it("caused no CSP violation and no page error (login, operation list, Try it out)", () => {
    expect(cspViolations).toEqual([]);
  });
});
