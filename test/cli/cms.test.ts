/**
 * The `cms` command line, run as a child process against the real server on 127.0.0.1: put → get
 * round trip with checksum, resume after a killed transfer, --json, no progress bar without a TTY,
 * and every error path (exit code 1, one clear line on stderr).
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { freePort, startTestApp, type TestApp } from "../helpers/test-app.js";
import { BIN, runCms, startCms } from "./run-cms.js";

const run = promisify(execFile);

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let app: TestApp;
let origin: Origin;
let env: Record<string, string>;
const cms = (...args: string[]) => runCms(args, env, app.dir);

/** Exit code 1 and exactly one line on stderr, matching `pattern`. */
function expectFailure(result: { code: number | null; stderr: string }, pattern: RegExp) {
  expect(result.code).toBe(1);
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(result.stderr).toMatch(pattern);
}

beforeAll(async () => {
  [app, origin] = await Promise.all([
    startTestApp({ CMS_LOG_LEVEL: "warn", CMS_PORT: String(await freePort()) }),
    startOrigin(),
  ]);
  env = { CMS_URL: app.baseUrl, XDG_CONFIG_HOME: join(app.dir, "config") };
});
afterAll(async () => {
  await Promise.all([app?.close(), origin?.close()]);
});

describe("cms put / get", () => {
  it("round-trips a file with its SHA-256, prints the API's JSON with --json and no progress bar without a TTY", async () => {
    const bytes = randomBytes(300_000);
    await writeFile(join(app.dir, "photo.bin"), bytes);
    const put = await cms("put", "photo.bin", "--tenant", "acme", "--type", "image/png", "--author", "Ann", "--json");
    expect(put.stderr).toBe("");
    expect(put.code).toBe(0);
    const created = JSON.parse(put.stdout) as {
      resourceURI: string;
      resourceUID: string;
      sha256: string;
      mediaType: string;
    };
    expect(created).toMatchObject({ sha256: sha256(bytes), mediaType: "image/png", author: "Ann" });

    const got = await cms("get", created.resourceURI, "-o", "copy.bin");
    expect(got).toMatchObject({ code: 0, stderr: "" });
    expect(got.stdout).toMatch(/copy\.bin .* sha256 verified/);
    expect(sha256(await readFile(join(app.dir, "copy.bin")))).toBe(sha256(bytes));

    const byUid = await cms("get", created.resourceUID); // default name: the resource's
    expect(byUid.code).toBe(0);
    expect(sha256(await readFile(join(app.dir, "photo.bin")))).toBe(sha256(bytes));
  });

  it("shows a progress bar (bytes, rate, ETA) on a terminal: util-linux `script` gives the CLI a pty", async () => {
    const bytes = randomBytes(2_000_000);
    await writeFile(join(app.dir, "tty.bin"), bytes);
    const { resourceURI } = JSON.parse((await cms("put", "tty.bin", "--tenant", "acme", "--json")).stdout) as {
      resourceURI: string;
    };
    const command = `${process.execPath} ${BIN} get ${resourceURI} -o tty-copy.bin --limit-rate 4M`;
    const { stdout } = await run("script", ["-qec", command, "/dev/null"], {
      cwd: app.dir,
      env: { ...env, PATH: process.env.PATH ?? "", HOME: app.dir },
    });
    expect(stdout).toMatch(/get =*-*.* \d+% \| [\d.]+ (KiB|MiB)\/1\.9 MiB \| [\d.]+ (B|KiB|MiB)\/s \| ETA \d+s/);
    expect(sha256(await readFile(join(app.dir, "tty-copy.bin")))).toBe(sha256(bytes));
  });

  it("registers a URL with createResource", async () => {
    const url = origin.put("note.txt", "from the origin");
    const put = await cms("put", url, "--tenant", "acme", "--type", "text/plain", "--json");
    expect(put.code).toBe(0);
    expect(JSON.parse(put.stdout)).toMatchObject({ size: 15, mediaType: "text/plain" });
    expect((JSON.parse(put.stdout) as { resourceURI: string }).resourceURI).toMatch(/\/note\.txt$/);
    const toStdout = await cms("get", (JSON.parse(put.stdout) as { resourceURI: string }).resourceURI, "-o", "-");
    expect(toStdout).toMatchObject({ code: 0, stdout: "from the origin", stderr: "" });
  });

  it("stores a URL's type as its origin says it when --type is not given", async () => {
    const put = await cms("put", origin.put("logo.png", PNG_1x1, "image/png"), "--tenant", "acme", "--json");
    expect(put).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(put.stdout)).toMatchObject({ mediaType: "image/png", size: PNG_1x1.length });
  });

  it("resumes a killed download with Range: the second run fetches only the rest, and the file verifies", async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    await writeFile(join(app.dir, "big.bin"), bytes);
    const { resourceURI } = JSON.parse((await cms("put", "big.bin", "--tenant", "acme", "--json")).stdout) as {
      resourceURI: string;
    };

    const slow = startCms(["get", resourceURI, "-o", "resumed.bin", "--limit-rate", "1M"], env, app.dir);
    const part = join(app.dir, "resumed.bin.part");
    for (let i = 0; i < 100 && ((await stat(part).catch(() => null))?.size ?? 0) < 256 * 1024; i++) await sleep(50);
    slow.child.kill("SIGKILL");
    await slow.done;
    const held = (await stat(part)).size;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(bytes.length);

    const second = await cms("get", resourceURI, "-o", "resumed.bin", "--json");
    expect(second.code).toBe(0);
    const report = JSON.parse(second.stdout) as { resumedFrom: number; received: number; size: number };
    expect(report.resumedFrom).toBeGreaterThanOrEqual(held);
    expect(report.received).toBe(bytes.length - report.resumedFrom);
    expect(report.received).toBeLessThan(bytes.length);
    expect(sha256(await readFile(join(app.dir, "resumed.bin")))).toBe(sha256(bytes));
    await expect(stat(part)).rejects.toThrow();
  });

  it("refuses a resumed file whose held bytes are corrupt (SHA-256 mismatch) and drops the partial", async () => {
    const bytes = randomBytes(100_000);
    await writeFile(join(app.dir, "c.bin"), bytes);
    const created = JSON.parse((await cms("put", "c.bin", "--tenant", "acme", "--json")).stdout) as {
      resourceURI: string;
      sha256: string;
    };
    await writeFile(join(app.dir, "corrupt.bin.part"), randomBytes(1000));
    await writeFile(join(app.dir, "corrupt.bin.part.json"), JSON.stringify({ etag: `"${created.sha256}"` }));
    expectFailure(await cms("get", created.resourceURI, "-o", "corrupt.bin"), /^cms: SHA-256 mismatch/);
    await expect(stat(join(app.dir, "corrupt.bin.part"))).rejects.toThrow();
    await expect(stat(join(app.dir, "corrupt.bin"))).rejects.toThrow();
  });
});

describe("cms ls / info / lock / unlock / link / rm", () => {
  it("lists, shows, locks, unlocks, links and removes", async () => {
    await writeFile(join(app.dir, "a-1.txt"), "one");
    const { resourceUID, resourceURI } = JSON.parse(
      (await cms("put", "a-1.txt", "--tenant", "lstest", "--type", "text/plain", "--json")).stdout,
    ) as { resourceUID: string; resourceURI: string };
    await cms("put", "a-1.txt", "--tenant", "lstest", "--name", "b-2.txt", "--type", "text/plain");

    const ls = await cms("ls", "--tenant", "lstest", "--prefix", "a-", "--json");
    expect(
      (JSON.parse(ls.stdout) as { resources: { resourceURI: string }[] }).resources.map((r) => r.resourceURI),
    ).toEqual([resourceURI]);
    expect((await cms("ls", "--tenant", "lstest", "--limit", "1")).stdout.trim().split("\n")).toHaveLength(1);
    expect((await cms("info", resourceUID)).stdout).toContain("text/plain");

    const lock = JSON.parse((await cms("lock", resourceUID, "--json")).stdout) as { lockID: string };
    expectFailure(await cms("rm", resourceUID), /^cms: 423 LOCKED: /);
    expectFailure(
      await cms("unlock", resourceUID, "--lock-id", "not-the-lock"),
      /^cms: (409 LOCK_NOT_HELD|423 LOCKED): /,
    );
    expect((await cms("unlock", resourceUID, "--lock-id", lock.lockID)).code).toBe(0);

    const link = (await cms("link", resourceURI, "--expires", "10m")).stdout.trim();
    expect(link).toMatch(/expires=\d+&signature=/);
    expect(await (await fetch(link)).text()).toBe("one");

    expect((await cms("rm", resourceUID)).code).toBe(0);
    expectFailure(await cms("info", resourceUID), /^cms: 404 NOT_FOUND: /);
  }, 90_000); // about ten CLI processes, each starting tsx: 25 s on a loaded 2-core machine
});

describe("cms lock / unlock / info: the lock the CLI took is remembered", () => {
  it("unlocks without --lock-id, shows the held lock in info, and forgets it once released or gone", async () => {
    await writeFile(join(app.dir, "held.txt"), "held");
    const { resourceUID } = JSON.parse(
      (await cms("put", "held.txt", "--tenant", "locks", "--type", "text/plain", "--json")).stdout,
    ) as { resourceUID: string };

    const lock = JSON.parse((await cms("lock", resourceUID, "--json")).stdout) as {
      lockID: string;
      lockExpirationDate: string;
    };
    const info = await cms("info", resourceUID);
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(`locked by you: ${lock.lockID} until ${lock.lockExpirationDate}`);
    expect(JSON.parse((await cms("info", resourceUID, "--json")).stdout)).toMatchObject({
      resourceUID,
      heldLock: { lockID: lock.lockID, lockExpirationDate: lock.lockExpirationDate },
    });
    // Lock IDs are capabilities: kept beside the login, readable by the user only.
    const stored = join(app.dir, "config", "cms", "locks.json");
    expect((await stat(stored)).mode & 0o777).toBe(0o600);

    // --lock-id still overrides, and a refused override leaves the remembered lock alone.
    expectFailure(
      await cms("unlock", resourceUID, "--lock-id", "not-the-lock"),
      /^cms: (409 LOCK_NOT_HELD|423 LOCKED): /,
    );
    const unlocked = await cms("unlock", resourceUID);
    expect(unlocked).toMatchObject({ code: 0, stderr: "" });
    expect(unlocked.stdout).toContain(`unlocked ${resourceUID}`);
    expect((await cms("info", resourceUID)).stdout).not.toContain("locked by you");
    expect(JSON.parse((await cms("info", resourceUID, "--json")).stdout)).not.toHaveProperty("heldLock");
    expectFailure(await cms("unlock", resourceUID), /^cms: no lock of .* remembered.*--lock-id/);

    // Released behind the CLI's back: the server's answer (lock not held) makes it forget the lock.
    const again = JSON.parse((await cms("lock", resourceUID, "--json")).stdout) as { lockID: string };
    const author = (JSON.parse((await cms("info", resourceUID, "--json")).stdout) as { author: string }).author;
    const released = await fetch(app.url("/cms/v1.0/unlockResourceDTO"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ resourceUID, author, lockID: again.lockID }),
    });
    expect(released.ok).toBe(true);
    expectFailure(await cms("unlock", resourceUID), /^cms: 409 LOCK_NOT_HELD: /);
    expect((await cms("info", resourceUID)).stdout).not.toContain("locked by you");
    expectFailure(await cms("unlock", resourceUID), /^cms: no lock of .* remembered/);
  }, 120_000); // fifteen CLI processes, each starting tsx
});

describe("cms error paths: exit code 1 and one clear line on stderr", () => {
  it.each([
    ["a missing argument", ["get"], /missing required argument 'resource'/],
    ["a missing option", ["ls"], /required option '--tenant <tenant>' not specified/],
    ["an unknown command", ["frobnicate"], /unknown command 'frobnicate'/],
    ["a bad duration", ["link", "x/y", "--expires", "soon"], /--expires .* invalid/],
    ["a bad limit", ["ls", "--tenant", "t", "--limit", "-3"], /--limit .* invalid/],
    ["an unknown resource", ["info", "01m8505ec2gjyhk5ep8jcs5dwayf7d-acme"], /^cms: 404 NOT_FOUND: /],
    [
      "a refused field",
      ["put", "https://example.org/x.png", "--tenant", "bad tenant!"],
      /^cms: 400 VALIDATION_FAILED: .*resourceTenantId/,
    ],
    ["a missing file", ["put", "no-such-file", "--tenant", "acme"], /^cms: ENOENT/],
    ["a missing password", ["login", "--issuer", "http://127.0.0.1:9/x", "--username", "u"], /no password/],
  ])("%s", async (_what, args, pattern) => {
    expectFailure(await cms(...args), pattern);
  });

  it("an unreachable server", async () => {
    // Below the ephemeral range, so no server another test starts on port 0 can take it meanwhile.
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runCms(["ls", "--tenant", "acme"], { ...env, CMS_URL: url }, app.dir);
    expectFailure(result, new RegExp(`^cms: cannot reach ${url}: ECONNREFUSED`));
  });

  it("--help everywhere", async () => {
    for (const args of [["--help"], ["put", "--help"], ["get", "--help"], ["login", "--help"]]) {
      const result = await cms(...args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: cms/);
    }
  });
});
