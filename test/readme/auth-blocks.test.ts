/**
 * The auth blocks, moved from the README to docs/auth.md (issue 40), run as written (issue 29: "the
 * README's blocks run as written under test"): the dev IdP (`npm run idp &`) and the server with auth on (`npm start &`), a token by the
 * password grant, a call without it (401) and with it, createResource as the creator; then
 * `cms login`, a `cms` command on the saved token, `cms logout`. Both blocks are pasted in order
 * into one bash, as into one terminal, in the repository's folder (npm's), on free loopback ports:
 * the blocks read CMS_IDP_PORT and CMS_PORT, the settings the IdP and the server listen on, with the
 * README's ports as their defaults. The data goes to a temp dir (CMS_VOLUME, CMS_DATABASE_URL), the
 * login to XDG_CONFIG_HOME; LOGO_URL is *Try it*'s, here a loopback origin (CMS_FETCH_ALLOW_PRIVATE).
 * bash runs in a process group of its own, which the blocks' background jobs share: the last test
 * stops that group and checks, by its PIDs, that no IdP or server is left.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { access, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { freePort } from "../helpers/test-app.js";
import { allPages, blockStarting, installCms, ROOT, RUN } from "./readme-blocks.js";

const LOGO = fileURLToPath(new URL("../../docs/library.png", import.meta.url));

let dir: string;
let origin: Origin;
let logo: Buffer;
let env: Record<string, string>;
let ports: { idp: number; cms: number };
/** The process group of the bash that ran the blocks: its id is that bash's PID. */
let group: number | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-readme-auth-"));
  let bin: string;
  [origin, logo, bin, ports] = await Promise.all([startOrigin(), readFile(LOGO), installCms(dir), twoFreePorts()]);
  env = {
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    HOME: process.env.HOME ?? dir, // npm's cache and logs
    XDG_CONFIG_HOME: join(dir, "config"),
    CMS_IDP_PORT: String(ports.idp),
    CMS_PORT: String(ports.cms),
    CMS_URL: `http://127.0.0.1:${ports.cms}`, // where `cms` goes, as for a user who moved the port
    CMS_PASSWORD: "cms-creator", // `cms login`'s password off a terminal (README: CMS_PASSWORD)
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_FETCH_ALLOW_PRIVATE: "true",
    CMS_LOG_LEVEL: "warn",
    LOGO_URL: origin.put("logo.png", logo, "image/png"),
  };
});
/** Two different free ports: the IdP's and the server's. */
async function twoFreePorts(): Promise<{ idp: number; cms: number }> {
  const idp = await freePort();
  let cms = await freePort();
  while (cms === idp) cms = await freePort();
  return { idp, cms };
}

afterAll(async () => {
  if (group !== undefined) signalGroup(group, "SIGKILL"); // only if the last test did not stop it
  await origin?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs `script` as pasted: bash, stop at the first failing command or pipe, in a process group of
 * its own. Its output, and its background jobs', goes to a file: the jobs outlive bash, so pipes to
 * them would not close when it exits. Resolves with bash's exit code and that output.
 */
async function bashInGroup(script: string, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  const log = join(dir, "output.log");
  const fd = openSync(log, "a");
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd: ROOT,
    env,
    stdio: ["ignore", fd, fd],
    detached: true,
  });
  closeSync(fd);
  group = child.pid;
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    new Promise<number | null>((resolve) => child.on("exit", resolve)),
    new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, timeoutMs, "timeout"))),
  ]);
  clearTimeout(timer);
  const output = await readFile(log, "utf8");
  if (code === "timeout") throw new Error(`the blocks did not finish within ${timeoutMs} ms; output:\n${output}`);
  return { code, output };
}

const signalGroup = (pgid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is empty already
  }
};

/** The live (not zombie) processes of a process group, from /proc. */
async function groupMembers(pgid: number): Promise<number[]> {
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, "utf8").catch(() => "")));
  return pids
    .filter((_, i) => {
      const stat = stats[i] as string;
      // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so count from the last ")".
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return state !== undefined && state !== "Z" && Number(pgrp) === pgid;
    })
    .map(Number);
}

const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/`).then(
    () => true,
    () => false,
  );

describe("docs/auth.md auth blocks, as written", () => {
  it("dev IdP and server with auth on: 401 without a token, apiversion and createResource with it; cms login, ls, logout", async () => {
    const pages = await allPages();
    const script = `${blockStarting(pages, RUN.auth)}\n${blockStarting(pages, RUN.login)}`;
    // npm start builds dist/ first, and the IdP loads oidc-provider through tsx: seconds on a loaded machine.
    const { code, output } = await bashInGroup(script, 100_000);
    expect(code, output).toBe(0);

    // No token: 401. With the token the IdP gave: apiversion, and createResource as cms-creator (201's body).
    expect(output).toMatch(/^401$/m);
    expect(output).toMatch(/"minVersion":1(\.0)?,"maxVersion":1(\.0)?,"versionContexts":\{"1\.0":"\/cms\/v1\.0"\}/);
    const created = /\{"resourceUID":"[0-9a-z]{30}-zaq12345","author":"Test Author","resourceURI":"([^"]+)"/.exec(
      output,
    );
    expect(created, output).not.toBeNull();
    const uri = created?.[1] as string;
    expect(uri).toMatch(/^[0-9a-z]{30}-zaq12345\/logo\.png$/);

    // cms login saved the token where XDG_CONFIG_HOME says; ls ran on it (tab-separated off a terminal).
    const session = join(env.XDG_CONFIG_HOME as string, "cms", "session.json");
    expect(output).toContain(`logged in as cms-creator (token saved in ${session})`);
    expect(output).toContain(`${uri}\timage/png\t${logo.length}\t`);
    expect(output).toMatch(/^logged out$/m);
    await expect(access(session)).rejects.toThrow(); // logout forgot it
  }, 120_000);

  it("leaves no IdP or server behind once bash's process group is stopped", async () => {
    const pgid = group as number;
    // The blocks' background jobs (npm run idp, npm start and their node processes) outlived bash, in its group.
    expect((await groupMembers(pgid)).length).toBeGreaterThanOrEqual(2);
    expect(await answers(ports.idp)).toBe(true);
    expect(await answers(ports.cms)).toBe(true);
    signalGroup(pgid, "SIGTERM");
    await expect.poll(() => groupMembers(pgid), { timeout: 15_000, interval: 100 }).toEqual([]);
    group = undefined;
    expect(await answers(ports.idp)).toBe(false);
    expect(await answers(ports.cms)).toBe(false);
  }, 30_000);
});
