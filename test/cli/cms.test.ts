/**
 * The `cms` command line, run as a child process against the real server on 127.0.0.1: put → get
 * round trip with checksum, resume after a killed transfer, --json, no progress bar without a TTY,
 * and every error path (exit code 1, one clear line on stderr).
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFile, stat, watch, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { scormZip } from "../helpers/packages.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
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
    startTestApp({ CMS_LOG_LEVEL: "warn" }, { ownPublicUrl: true }), // signed links name its URL
    startOrigin(),
  ]);
  env = { CMS_URL: app.baseUrl, XDG_CONFIG_HOME: join(app.dir, "config") };
});
afterAll(async () => {
  await Promise.all([app?.close(), origin?.close()]);
});

/** Resolves once `file` holds at least `bytes`: checked on each change in its folder, no polling. */
async function grownTo(file: string, bytes: number): Promise<void> {
  const size = async () => (await stat(file).catch(() => null))?.size ?? 0;
  const stop = new AbortController();
  const changes = watch(join(file, ".."), { signal: stop.signal });
  try {
    if ((await size()) >= bytes) return;
    for await (const _ of changes) if ((await size()) >= bytes) return;
  } finally {
    stop.abort();
  }
}

// The tests below are independent (their own files, tenants and resources): they run concurrently,
// as do the independent cms processes inside them. A cms process is mostly start-up (bin/cms.mjs runs
// the dist/cli bundle global-setup builds), so this file's time is the number of them in a row.
// Several cms processes each, sharing the CPU with the tests beside them.
describe.concurrent("cms put / get", { timeout: 90_000 }, () => {
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

    const [got, byUid] = await Promise.all([
      cms("get", created.resourceURI, "-o", "copy.bin"),
      cms("get", created.resourceUID), // default name: the resource's
    ]);
    expect(got).toMatchObject({ code: 0, stderr: "" });
    expect(got.stdout).toMatch(/copy\.bin .* sha256 verified/);
    expect(sha256(await readFile(join(app.dir, "copy.bin")))).toBe(sha256(bytes));
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

  it("puts a file without --type as its name suggests, checked by the server against the bytes", async () => {
    const files: [string, Uint8Array | string, string][] = [
      ["typed-photo.png", PNG_1x1, "image/png"],
      ["typed-notes.txt", "no signature to contradict the name", "text/plain"],
      ["typed-misnamed.jpg", PNG_1x1, "image/png"], // a PNG named .jpg: the bytes win
      ["typed-unknown", PNG_1x1, "image/png"], // no extension: the bytes decide
      ["typed-course.zip", await scormZip(), "application/zip"], // a zip, but no package without --type
    ];
    await Promise.all(files.map(([name, bytes]) => writeFile(join(app.dir, name), bytes)));
    const puts = await Promise.all(files.map(([name]) => cms("put", name, "--tenant", "acme", "--json")));
    for (const [i, put] of puts.entries()) {
      expect(put).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(put.stdout)).toMatchObject({ mediaType: files[i]?.[2], resourcesList: null });
    }
  });

  it("resumes a killed download with Range: the second run fetches only the rest, and the file verifies", async () => {
    const bytes = randomBytes(4 * 1024 * 1024);
    await writeFile(join(app.dir, "big.bin"), bytes);
    const { resourceURI } = JSON.parse((await cms("put", "big.bin", "--tenant", "acme", "--json")).stdout) as {
      resourceURI: string;
    };

    const slow = startCms(["get", resourceURI, "-o", "resumed.bin", "--limit-rate", "1M"], env, app.dir);
    const part = join(app.dir, "resumed.bin.part");
    await grownTo(part, 256 * 1024);
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

describe.concurrent("cms ls / info / lock / unlock / link / rm", () => {
  it("lists, shows, locks, unlocks, links and removes", async () => {
    // Its own config folder: `cms lock` records the lock in locks.json, which the test below inspects.
    const cms = (...args: string[]) => runCms(args, { ...env, XDG_CONFIG_HOME: join(app.dir, "config-ls") }, app.dir);
    await writeFile(join(app.dir, "a-1.txt"), "one");
    const [a, b] = await Promise.all([
      cms("put", "a-1.txt", "--tenant", "lstest", "--type", "text/plain", "--json"),
      cms("put", "a-1.txt", "--tenant", "lstest", "--name", "b-2.txt", "--type", "text/plain"),
    ]);
    expect(b.code).toBe(0);
    const { resourceUID, resourceURI } = JSON.parse(a.stdout) as { resourceUID: string; resourceURI: string };

    const [ls, limited, info, lock] = await Promise.all([
      cms("ls", "--tenant", "lstest", "--prefix", "a-", "--json"),
      cms("ls", "--tenant", "lstest", "--limit", "1"),
      cms("info", resourceUID),
      cms("lock", resourceUID, "--json"),
    ]);
    expect(
      (JSON.parse(ls.stdout) as { resources: { resourceURI: string }[] }).resources.map((r) => r.resourceURI),
    ).toEqual([resourceURI]);
    expect(limited.stdout.trim().split("\n")).toHaveLength(1);
    expect(info.stdout).toContain("text/plain");

    const { lockID } = JSON.parse(lock.stdout) as { lockID: string };
    const [rmLocked, wrongLock, link] = await Promise.all([
      cms("rm", resourceUID),
      cms("unlock", resourceUID, "--lock-id", "not-the-lock"),
      cms("link", resourceURI, "--expires", "10m"),
    ]);
    expectFailure(rmLocked, /^cms: 423 LOCKED: /);
    expectFailure(wrongLock, /^cms: (409 LOCK_NOT_HELD|423 LOCKED): /);
    expect(link.stdout.trim()).toMatch(/expires=\d+&signature=/);
    expect(await (await fetch(link.stdout.trim())).text()).toBe("one");
    expect((await cms("unlock", resourceUID, "--lock-id", lockID)).code).toBe(0);

    expect((await cms("rm", resourceUID)).code).toBe(0);
    expectFailure(await cms("info", resourceUID), /^cms: 404 NOT_FOUND: /);
  }, 120_000); // seven rounds of CLI processes, beside the other tests, on a loaded 2-core machine
});

describe.concurrent("cms lock / unlock / info: the lock the CLI took is remembered", () => {
  it("unlocks without --lock-id, shows the held lock in info, and forgets it once released or gone", async () => {
    await writeFile(join(app.dir, "held.txt"), "held");
    const { resourceUID } = JSON.parse(
      (await cms("put", "held.txt", "--tenant", "locks", "--type", "text/plain", "--json")).stdout,
    ) as { resourceUID: string };

    const lock = JSON.parse((await cms("lock", resourceUID, "--json")).stdout) as {
      lockID: string;
      lockExpirationDate: string;
    };
    const [info, infoJson] = await Promise.all([cms("info", resourceUID), cms("info", resourceUID, "--json")]);
    expect(info.code).toBe(0);
    expect(info.stdout).toContain(`locked by you: ${lock.lockID} until ${lock.lockExpirationDate}`);
    expect(JSON.parse(infoJson.stdout)).toMatchObject({
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
    const [afterInfo, afterJson, afterUnlock] = await Promise.all([
      cms("info", resourceUID),
      cms("info", resourceUID, "--json"),
      cms("unlock", resourceUID),
    ]);
    expect(afterInfo.stdout).not.toContain("locked by you");
    expect(JSON.parse(afterJson.stdout)).not.toHaveProperty("heldLock");
    expectFailure(afterUnlock, /^cms: no lock of .* remembered.*--lock-id/);

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
    const [forgotten, nothingHeld] = await Promise.all([cms("info", resourceUID), cms("unlock", resourceUID)]);
    expect(forgotten.stdout).not.toContain("locked by you");
    expectFailure(nothingHeld, /^cms: no lock of .* remembered/);
  }, 150_000); // ten rounds of CLI processes, beside the other tests, on a loaded 2-core machine

  it("remembers every lock when several `cms lock` run at once, and forgets each on its unlock", async () => {
    // Its own config folder: every process reads and rewrites the same locks.json.
    const own = (...args: string[]) =>
      runCms(args, { ...env, XDG_CONFIG_HOME: join(app.dir, "config-racing") }, app.dir);
    await writeFile(join(app.dir, "racing.txt"), "racing");
    const uids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const put = await own("put", "racing.txt", "--tenant", "racing", "--name", `r-${i}.txt`, "--json");
      uids.push((JSON.parse(put.stdout) as { resourceUID: string }).resourceUID);
    }
    const locked = await Promise.all(uids.map((uid) => own("lock", uid)));
    expect(locked.map((r) => r.code)).toEqual(uids.map(() => 0));
    const stored = JSON.parse(await readFile(join(app.dir, "config-racing", "cms", "locks.json"), "utf8")) as Record<
      string,
      Record<string, unknown>
    >;
    expect(Object.keys(stored[app.baseUrl] ?? {}).sort()).toEqual([...uids].sort());
    // Unlocked at once too, without --lock-id: each finds its lock, and none is left behind.
    const unlocked = await Promise.all(uids.map((uid) => own("unlock", uid)));
    expect(unlocked.map((r) => r.code)).toEqual(uids.map(() => 0));
    expect(JSON.parse(await readFile(join(app.dir, "config-racing", "cms", "locks.json"), "utf8"))).toEqual({});
  }, 150_000);
});

describe.concurrent("cms error paths: exit code 1 and one clear line on stderr", () => {
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
    // Port 2: privileged and below the ephemeral range, so no test's server (all on port 0) ever
    // listens there, and nothing is probed; not one of the ports fetch refuses itself (9 is).
    const url = "http://127.0.0.1:2";
    const result = await runCms(["ls", "--tenant", "acme"], { ...env, CMS_URL: url }, app.dir);
    expectFailure(result, new RegExp(`^cms: cannot reach ${url}: ECONNREFUSED`));
  });

  it("--help everywhere", async () => {
    const helps = [["--help"], ["put", "--help"], ["get", "--help"], ["login", "--help"]];
    for (const result of await Promise.all(helps.map((args) => cms(...args)))) {
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: cms/);
    }
  });
});

describe("cms put by createUploadURL", { timeout: 90_000 }, () => {
  it("sends a file by the upload URL when the server offers it, and through uploadResource with --no-direct", async () => {
    const bytes = randomBytes(200_000);
    await writeFile(join(app.dir, "direct.bin"), bytes);
    const direct = await cms("put", "direct.bin", "--tenant", "direct", "--json");
    expect(direct).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(direct.stdout)).toMatchObject({ sha256: sha256(bytes) });
    const streamed = await cms("put", "direct.bin", "--tenant", "streamed", "--no-direct", "--json");
    expect(streamed).toMatchObject({ code: 0, stderr: "" });
    // Only the first went by createUploadURL: its upload is recorded as completed.
    const db = createClient({ url: app.databaseUrl });
    const rows = await db.execute(
      "select tenant_id, state from direct_uploads where tenant_id in ('direct', 'streamed')",
    );
    db.close();
    expect(rows.rows.map((r) => [r.tenant_id, r.state])).toEqual([["direct", "completed"]]);
  });
});
