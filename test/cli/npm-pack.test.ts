/**
 * The package outside this repository: `npm pack` (which builds dist/ in prepack) gives a tarball
 * that installs into an empty project and provides `npx cms` and the typed client at
 * "content-resource-service/client". The tarball's dependencies come from the npm cache where they
 * are there (`--prefer-offline`); npm asks the registry only for what the cache lacks (its package
 * lists: `--offline` fails with ENOTCACHED after `npm ci`, which caches tarballs only).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let project: string;
let version: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-pack-"));
  project = join(dir, "project");
  version = (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
  await run("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: ROOT });
  const [tarball] = (await readdir(dir)).filter((name) => name.endsWith(".tgz"));
  await mkdir(project);
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "empty", private: true, type: "module" }));
  await run("npm", ["install", join(dir, tarball as string), "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
  });
}, 600_000);
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("npm pack", () => {
  it("installs into an empty project and provides npx cms", async () => {
    const { stdout } = await run("npx", ["--no-install", "cms", "--version"], { cwd: project });
    expect(stdout.trim()).toBe(version);
  }, 60_000);

  it("provides the typed client at content-resource-service/client", async () => {
    const script =
      'import { createCmsClient } from "content-resource-service/client"; console.log(typeof createCmsClient)';
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project });
    expect(stdout.trim()).toBe("function");
  }, 60_000);
});
