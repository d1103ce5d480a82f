/**
 * The `cms` command line for people (issue 29 point 3): --version, a closed pipe is a normal end,
 * `link` takes a UID like `get` does, and `ls` prints human sizes with a header on a terminal (raw
 * with --bytes or --json). Run as child processes against the real server on 127.0.0.1; util-linux
 * `script` gives the CLI a pty where a terminal is needed.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { BIN, runCms } from "./run-cms.js";

const run = promisify(execFile);
let app: TestApp;
let env: Record<string, string>;
let big: { resourceUID: string; resourceURI: string };
const cms = (...args: string[]) => runCms(args, env, app.dir);

/** Runs `command` in a shell, in a pty when `tty` (util-linux script). */
const shell = (command: string, tty = false) =>
  run(tty ? "script" : "bash", tty ? ["-qec", command, "/dev/null"] : ["-c", command], {
    cwd: app.dir,
    env: { ...env, PATH: process.env.PATH ?? "", HOME: app.dir },
  });

beforeAll(async () => {
  app = await startTestApp({ CMS_LOG_LEVEL: "warn" }, { ownPublicUrl: true }); // signed links name its URL
  env = { CMS_URL: app.baseUrl, XDG_CONFIG_HOME: join(app.dir, "config") };
  await writeFile(join(app.dir, "big.bin"), randomBytes(3 * 1024 * 1024));
  const put = await cms("put", "big.bin", "--tenant", "friendly", "--type", "application/octet-stream", "--json");
  big = JSON.parse(put.stdout) as typeof big;
}, 60_000);
afterAll(() => app?.close());

describe("a friendlier cms", () => {
  it("prints its version", async () => {
    const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    const result = await cms("--version");
    expect(result).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("ends quietly with 0 when the reader closes the pipe (get -o - | head -c 100)", async () => {
    const { stdout, stderr } = await shell(
      `set -o pipefail; ${process.execPath} ${BIN} get ${big.resourceURI} -o - | head -c 100 | wc -c`,
    );
    expect(stderr).toBe("");
    expect(stdout.trim()).toBe("100");
  }, 60_000);

  it("makes a signed link from a UID as from a resourceURI", async () => {
    const result = await cms("link", big.resourceUID, "--expires", "10m");
    expect(result.stderr).toBe("");
    const link = result.stdout.trim();
    expect(link).toContain(`/${big.resourceURI}?expires=`);
    expect((await fetch(link, { method: "HEAD" })).headers.get("content-length")).toBe(String(3 * 1024 * 1024));
  });

  it("lists human sizes under a header on a terminal, raw bytes with --bytes or without one", async () => {
    const { stdout } = await shell(`${process.execPath} ${BIN} ls --tenant friendly`, true);
    const lines = stdout.trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^RESOURCE\s+TYPE\s+SIZE\s+CREATED/);
    expect(lines[1]).toMatch(new RegExp(`^${big.resourceURI}\\s+application/octet-stream\\s+3\\.0 MiB\\s+\\d{4}-`));
    const bytes = await shell(`${process.execPath} ${BIN} ls --tenant friendly --bytes`, true);
    expect(bytes.stdout).toContain(String(3 * 1024 * 1024));
    const piped = await cms("ls", "--tenant", "friendly");
    expect(piped.stdout.trim().split("\n")).toEqual([expect.stringContaining(`\t${3 * 1024 * 1024}\t`)]);
  }, 60_000);
});
