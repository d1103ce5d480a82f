/**
 * The CLI's saved login expires on the clock it is given: the token is reused until 30 s before
 * expiresAt, then refreshed against the provider's token endpoint (a stand-in on 127.0.0.1 that
 * answers the refresh grant). No sleeps: the test moves the clock.
 */
import { createServer, type Server } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { loadSession, saveSession, sessionFrom, sessionTokenAt } from "../../src/cli/session.js";
import { fakeClock } from "../helpers/fake-clock.js";

let issuer: string;
let server: Server;
const grants: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      grants.push(new URLSearchParams(body).get("grant_type") ?? "");
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ access_token: "fresh", expires_in: 300, refresh_token: "r2" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/cms`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-session-"));
  vi.stubEnv("XDG_CONFIG_HOME", dir);
  vi.stubEnv("CMS_TOKEN", "");
  grants.length = 0;
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(dir, { recursive: true, force: true });
});

it("a login's expiry is counted from the given clock", () => {
  const time = fakeClock(1_000_000);
  expect(sessionFrom(issuer, "cms", undefined, { access_token: "a", expires_in: 60 }, time.clock).expiresAt).toBe(
    1_060_000,
  );
});

it("reuses the saved token until 30 s before it expires on the given clock, then refreshes and saves the new one", async () => {
  const time = fakeClock(1_000_000);
  await saveSession(
    sessionFrom(issuer, "cms", undefined, { access_token: "saved", expires_in: 60, refresh_token: "r1" }, time.clock),
  );
  const token = sessionTokenAt(time.clock);
  time.advance(29_000);
  expect(await token()).toBe("saved");
  expect(grants).toEqual([]);
  time.advance(2_000); // 29 s left: inside the 30 s margin
  expect(await token()).toBe("fresh");
  expect(grants).toEqual(["refresh_token"]);
  expect(await loadSession()).toMatchObject({
    accessToken: "fresh",
    refreshToken: "r2",
    expiresAt: 1_031_000 + 300_000,
  });
});

it("without a refresh token, an expired login asks for `cms login` again", async () => {
  const time = fakeClock(1_000_000);
  await saveSession(sessionFrom(issuer, "cms", undefined, { access_token: "saved", expires_in: 60 }, time.clock));
  const token = sessionTokenAt(time.clock);
  expect(await token()).toBe("saved");
  time.advance(60_000);
  await expect(token()).rejects.toThrow("run `cms login` again");
  expect(grants).toEqual([]);
});
