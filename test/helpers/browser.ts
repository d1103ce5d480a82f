/** Debian's Chromium through playwright-core, headless and quiet: no traffic beyond what a test causes. */
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";

const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: CHROMIUM_FLAGS });

/**
 * Opens the explorer at `explorerUrl`, which sends the tab to the dev IdP's login (authorization
 * code + PKCE); logs `user` in (password = name) and waits until the page shows the session.
 */
export async function logIntoExplorer(page: Page, explorerUrl: string, issuer: string, user: string) {
  await page.goto(explorerUrl);
  await page.waitForURL((url) => url.href.startsWith(issuer));
  await page.fill("#username", user);
  await page.fill("#password", user);
  await Promise.all([page.waitForURL((url) => url.href.startsWith(explorerUrl)), page.click("#kc-login")]);
  // A bound, not a wait: Swagger UI's 1.7 MB bundle took over 15 s to show the session at a load average of 13.
  await page.waitForSelector("#cms-session.on", { timeout: 60_000 });
  expect(await page.textContent("#cms-user")).toBe(`Signed in as ${user}`);
  // The code and state were removed from the address bar after the exchange.
  expect(page.url()).toBe(explorerUrl);
}
