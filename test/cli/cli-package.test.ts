/**
 * `cms` outside the repository: packages/cli packs (its prepack bundles src/cli into one file) into
 * a tarball with no dependencies, which `npm install -g` puts into an empty prefix offline, with no
 * install scripts and nothing but the one file; the installed `cms` then talks to a real server.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PACKAGE = join(ROOT, "packages", "cli");

let dir: string;
let prefix: string;
let tarball: string;
let installOutput: string;
let installMs: number;
let app: TestApp;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-cli-package-"));
  prefix = join(dir, "prefix");
  await run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: PACKAGE });
  const [name] = (await readdir(dir)).filter((entry) => entry.endsWith(".tgz"));
  tarball = join(dir, name as string);
  const started = performance.now();
  // --offline: a package with no dependencies needs nothing from a registry.
  const installed = await run(
    "npm",
    ["install", "-g", tarball, "--prefix", prefix, "--offline", "--no-audit", "--no-fund", "--loglevel=warn"],
    { cwd: dir, env: { ...process.env, npm_config_cache: join(dir, "npm-cache") } },
  );
  installMs = performance.now() - started;
  installOutput = installed.stdout + installed.stderr;
  app = await startTestApp({ CMS_LOG_LEVEL: "warn" });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

const cms = (...args: string[]) =>
  run(join(prefix, "bin", "cms"), args, {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: dir, CMS_URL: app.url("") },
  });

describe("packages/cli", () => {
  it("packs one file and a manifest with no dependencies and no install scripts", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    expect(stdout.trim().split("\n").sort()).toEqual(["package/dist/cms.mjs", "package/package.json"]);
    const { stdout: manifestText } = await run("tar", ["-xzOf", tarball, "package/package.json"]);
    const manifest = JSON.parse(manifestText) as Record<string, Record<string, string> | undefined>;
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies"])
      expect(manifest[field]).toBeUndefined();
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => /install/.test(s))).toEqual([]);
    const { version } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(manifest.version).toBe(version);
  });

  it("installs globally into an empty prefix offline in seconds, without warnings", () => {
    expect(installOutput).not.toMatch(/warn|script/i);
    expect(installMs).toBeLessThan(20_000);
  });

  it("the installed cms reports its version and works against a server", async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect((await cms("--version")).stdout.trim()).toBe(version);
    await writeFile(join(dir, "hello.txt"), "hello from outside the repository");
    const put = await cms("put", "hello.txt", "--tenant", "outside", "--json");
    const created = JSON.parse(put.stdout) as { resourceURI: string; size: number };
    expect(created.size).toBe(33);
    const got = await cms("get", created.resourceURI, "-o", "-");
    expect(got.stdout).toBe("hello from outside the repository");
  });
});
