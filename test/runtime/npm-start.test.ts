/**
 * `npm start` as a user runs it: npm → sh → node. Killing the PID the user started (npm's) must stop
 * the server: sh does not pass a signal on to a child it waits for, so the server must be sh's
 * replacement (`exec`), not its child.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/test-app.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-npm-start-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** True when something accepts connections on 127.0.0.1:port. */
const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );

describe("npm start", () => {
  it("stops the server when the npm process it started is killed", async () => {
    const port = await freePort();
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        CMS_HOST: "127.0.0.1",
        CMS_PORT: String(port),
        CMS_VOLUME: join(dir, "volume"),
        CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so cleanup can reach a server the kill left behind (what failed before).
      detached: true,
    });
    let output = "";
    npm.stdout.on("data", (d) => (output += d));
    npm.stderr.on("data", (d) => (output += d));
    const exited = new Promise<void>((resolve) => npm.on("exit", () => resolve()));
    try {
      await expect.poll(() => output.includes('"msg":"listening"'), { timeout: 90_000, interval: 250 }).toBe(true);
      expect(await answers(port)).toBe(true);
      npm.kill("SIGTERM");
      await exited;
      await expect.poll(() => answers(port), { timeout: 10_000, interval: 200 }).toBe(false);
    } finally {
      try {
        process.kill(-(npm.pid as number), "SIGKILL");
      } catch {
        // the group is gone already
      }
    }
  }, 120_000);
});
