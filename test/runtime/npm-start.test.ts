/**
 * `npm start` as a user runs it: npm → sh → node. Killing the PID the user started (npm's) must stop
 * the server: sh does not pass a signal on to a child it waits for, so the server must be sh's
 * replacement (`exec`), not its child.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-npm-start-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** True when something accepts connections at `url`. */
const answers = (url: string) =>
  fetch(`${url}/healthz`).then(
    () => true,
    () => false,
  );

/** The URL of the server's "listening" log line, once it is printed (the build comes first). */
function listeningUrl(stdout: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: stdout });
    const before: string[] = [];
    lines.on("line", (line) => {
      if (line.includes('"msg":"listening"')) resolve((JSON.parse(line) as { url: string }).url);
      else before.push(line);
    });
    lines.on("close", () => reject(new Error(`npm start ended before its server listened: ${before.join("\n")}`)));
  });
}

describe("npm start", () => {
  it("stops the server when the npm process it started is killed", async () => {
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        CMS_HOST: "127.0.0.1",
        CMS_PORT: "0", // the server says which port it took in its "listening" line
        CMS_VOLUME: join(dir, "volume"),
        CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group, so cleanup can reach a server the kill left behind (what failed before).
      detached: true,
    });
    npm.stderr.resume();
    const exited = new Promise<void>((resolve) => npm.on("exit", () => resolve()));
    try {
      const url = await listeningUrl(npm.stdout);
      expect(await answers(url)).toBe(true);
      npm.kill("SIGTERM");
      await exited;
      await expect.poll(() => answers(url), { timeout: 10_000, interval: 200 }).toBe(false);
    } finally {
      try {
        process.kill(-(npm.pid as number), "SIGKILL");
      } catch {
        // the group is gone already
      }
    }
  }, 120_000);
});
