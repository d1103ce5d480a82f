/**
 * bin/cms.mjs runs the built bundle (dist/cli/cms.mjs) only while it is as new as every source it
 * was built from (dist/cli/inputs.json); otherwise src/cli/main.ts through tsx, so an edited tree
 * never runs a stale CLI. Run on a copy of bin/ and dist/cli/ beside links to the tree's src/,
 * node_modules/ and package.json, so no file of the tree is touched; the copied bundle is a stand-in
 * that only says it ran.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "./run-cms.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let bundle: string;
let version: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-bin-"));
  bundle = join(dir, "dist/cli/cms.mjs");
  await Promise.all([mkdir(join(dir, "bin")), mkdir(join(dir, "dist/cli"), { recursive: true })]);
  await Promise.all([
    copyFile(BIN, join(dir, "bin/cms.mjs")),
    writeFile(bundle, 'process.stdout.write("from the bundle\\n");\n'),
    copyFile(join(ROOT, "dist/cli/inputs.json"), join(dir, "dist/cli/inputs.json")),
    ...["src", "node_modules", "package.json"].map((name) => symlink(join(ROOT, name), join(dir, name))),
  ]);
  version = (JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const cmsVersion = async () =>
  (await run(process.execPath, [join(dir, "bin/cms.mjs"), "--version"], { cwd: dir })).stdout.trim();

describe("bin/cms.mjs", () => {
  it("runs the bundle while it is as new as its sources, and the sources through tsx once one is newer", async () => {
    expect(await cmsVersion()).toBe("from the bundle");
    const past = new Date("2000-01-01T00:00:00Z");
    await utimes(bundle, past, past); // as if src/ had been edited after the build
    expect(await cmsVersion()).toBe(version);
  });
});
