/**
 * The CLI's files in its config folder (session.json, locks.json: issue 41 item 9), on real files:
 * a symlink planted at a temp name or at the file itself is never followed (its target keeps its
 * bytes), the files are 0600, and a folder others may write to is refused, as ssh refuses one.
 */
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { heldLock, rememberLock } from "../../src/cli/held-locks.js";
import { loadSession, saveSession } from "../../src/cli/session.js";

const SERVER = "http://127.0.0.1:9082";
const lock = {
  resourceUID: "u1",
  lockID: "the-lock-id",
  author: "me",
  lockExpirationDate: new Date(Date.now() + 3_600_000).toISOString(),
};
const session = { issuer: "http://127.0.0.1:1/realms/cms", clientId: "cms", accessToken: "a", expiresAt: 1 };

let home: string;
let folder: string;
let victim: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "cms-config-"));
  folder = join(home, "cms");
  await mkdir(folder, { mode: 0o700 });
  victim = join(home, "victim.txt");
  await writeFile(victim, "the victim's bytes");
  vi.stubEnv("XDG_CONFIG_HOME", home);
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(home, { recursive: true, force: true });
});

const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe("the CLI's config files", () => {
  it("cms lock never follows a symlink planted at the old temp name, and leaves no temp file", async () => {
    await symlink(victim, join(folder, `locks.json.${process.pid}.tmp`));
    await rememberLock(SERVER, lock);
    expect(await readFile(victim, "utf8")).toBe("the victim's bytes");
    expect((await heldLock(SERVER, "u1"))?.lockID).toBe("the-lock-id");
    expect(await mode(join(folder, "locks.json"))).toBe(0o600);
    expect(
      (await readdir(folder)).filter((name) => name.endsWith(".tmp") && !name.includes(String(process.pid))),
    ).toEqual([]);
  });

  it("cms login replaces a symlink planted at session.json instead of writing through it", async () => {
    await symlink(victim, join(folder, "session.json"));
    await saveSession(session);
    expect(await readFile(victim, "utf8")).toBe("the victim's bytes");
    expect((await lstat(join(folder, "session.json"))).isFile()).toBe(true);
    expect(await mode(join(folder, "session.json"))).toBe(0o600);
    expect((await loadSession())?.accessToken).toBe("a");
  });

  it.each([
    ["group", 0o770],
    ["world", 0o707],
  ])("a folder %s-writable is refused, naming it, and nothing is written or read", async (_who, bits) => {
    await chmod(folder, bits);
    const refusal = new RegExp(`${folder.replaceAll("/", "\\/")} is writable by others.*chmod 700`);
    await expect(saveSession(session)).rejects.toThrow(refusal);
    await expect(rememberLock(SERVER, lock)).rejects.toThrow(refusal);
    await expect(loadSession()).rejects.toThrow(refusal);
    expect(await readdir(folder)).toEqual([]);
  });
});
