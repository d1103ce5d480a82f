/**
 * The README's *Try it* block and its `cms` block, run as written (issue 29: "a test runs the
 * README's quick-start and CLI blocks as written, so they cannot drift again"): extracted from
 * README.md and run by bash, in order, in one folder, against a real server and a real origin on
 * 127.0.0.1. The blocks read two variables a user has defaults for: CMS_URL (the server) and
 * LOGO_URL (an image to register), here the loopback ones. `cms` is on PATH as an installed
 * package's bin is. The auth blocks (docs/auth.md) run in auth-blocks.test.ts; this file also holds
 * the inventory: every ```sh block of the README and of the docs pages its text moved to is run by
 * one of the two files or listed, with its reason, as not run (readme-blocks.ts). *Try it* also runs
 * against a server that may not fetch the logo's loopback origin, as it would refuse a private URL:
 * it must stop at that refusal, say why, and save no logo.png (issue 40: no `undefined` printed, no
 * error JSON saved as an image).
 */
import { execFile } from "node:child_process";
import { access, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import {
  allPages,
  blockStarting,
  commandLines,
  installCms,
  NOT_RUN,
  readPages,
  RUN,
  shellBlocks,
} from "./readme-blocks.js";

const run = promisify(execFile);
const LOGO = fileURLToPath(new URL("../../docs/library.png", import.meta.url));

let app: TestApp;
let origin: Origin;
let logo: Buffer;
let dir: string;
let env: Record<string, string>;
let readme: string;
let pages: Map<string, string>;

/** Runs `block` as a pasted script: bash, stop at the first failing command or pipe. */
const bash = (block: string) =>
  run("bash", ["-e", "-o", "pipefail", "-c", block], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });

beforeAll(async () => {
  [app, origin, logo, readme, pages] = await Promise.all([
    startTestApp({ CMS_LOG_LEVEL: "warn" }, { ownPublicUrl: true }),
    startOrigin(),
    readFile(LOGO),
    allPages(),
    readPages(),
  ]);
  dir = join(app.dir, "user");
  const [bin] = await Promise.all([installCms(app.dir), mkdir(dir)]);
  env = {
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    HOME: dir,
    XDG_CONFIG_HOME: join(dir, ".config"),
    CMS_URL: app.baseUrl,
    LOGO_URL: origin.put("logo.png", logo, "image/png"),
  };
});
afterAll(async () => {
  await Promise.all([app?.close(), origin?.close()]);
});

describe("README blocks, as written", () => {
  it("every sh block is run by a test or listed as not run, with its reason; no entry is stale", () => {
    const entries = [...Object.values(RUN), ...NOT_RUN.map((n) => n.start)];
    for (const [page, text] of pages) {
      // A shell block fenced otherwise (```bash, indented in a list) would escape the inventory;
      // scale-out.md's named blocks are its recipe's, run by test/multi/two-instances.test.ts.
      const fences = text.split("\n").filter((line) => line.trimStart().startsWith("```"));
      expect(
        fences.filter((fence) => !/^```(sh( scale-out:[\w-]+)?|ts|json)?$/.test(fence)),
        `${page}: fences the inventory cannot see`,
      ).toEqual([]);
      for (const block of shellBlocks(text)) {
        expect(
          entries.filter((start) => block.startsWith(start)),
          `${page} block (add it to RUN or NOT_RUN in test/readme/readme-blocks.ts):\n${block}`,
        ).toHaveLength(1);
      }
    }
    const blocks = shellBlocks(readme);
    for (const start of entries) {
      expect(
        blocks.filter((block) => block.startsWith(start)),
        `entry "${start}"`,
      ).toHaveLength(1);
    }
    for (const { why } of NOT_RUN) expect(why.length).toBeGreaterThan(40);
  });

  it("the README starts with the two commands, holds Try it and the cms block, and links every page", () => {
    const own = pages.get("README.md") as string;
    expect(shellBlocks(own)[0]).toMatch(/^npm ci && npm start {2}.*\nnpm test {2}/);
    for (const start of [RUN.tryIt, RUN.cms])
      expect(shellBlocks(own).filter((b) => b.startsWith(start))).toHaveLength(1);
    for (const page of pages.keys()) {
      if (page !== "README.md") expect(own, `README links ${page}`).toContain(`](${page})`);
    }
  });

  it("every block that runs is pasteable: no elisions, no example.org, no <placeholders>", () => {
    for (const start of Object.values(RUN)) {
      for (const line of commandLines(blockStarting(readme, start))) {
        expect(line).not.toMatch(/…|example\.(org|com)|<[A-Z_a-z]+>/);
      }
    }
  });

  it("Try it, then the cms block: each exits 0 with its key output", async () => {
    // Try it: apiversion, createResource from the origin (its type kept), getData whole and by Range.
    const { stdout } = await bash(blockStarting(readme, RUN.tryIt));
    expect(stdout).toMatch(/"minVersion":1(\.0)?,"maxVersion":1(\.0)?,"versionContexts":\{"1\.0":"\/cms\/v1\.0"\}/);
    const uri = /^([0-9a-z]{30}-zaq12345\/logo\.png)$/m.exec(stdout)?.[1];
    expect(uri).toBeDefined();
    expect(Buffer.compare(await readFile(join(dir, "logo.png")), logo)).toBe(0);
    expect(stdout).toMatch(/^HTTP\/1\.1 206 /m);
    expect(stdout).toMatch(new RegExp(`^content-range: bytes 0-99/${logo.length}\\r?$`, "mi"));
    expect(stdout).toMatch(/^content-type: image\/png\r?$/im);

    // The cms block, after Try it as the README says (its logo.png, its LOGO_URL).
    await runCmsBlock(blockStarting(readme, RUN.cms));
  }, 120_000); // about fifteen processes (curl, node, cms) one after another, on a loaded 2-core machine

  it("Try it stops at a refused fetch: one line saying why, no `undefined`, no logo.png", async () => {
    // A server that refuses private origins, as every server does by default: LOGO_URL is on 127.0.0.1.
    const strict = await startTestApp({ CMS_LOG_LEVEL: "warn", CMS_FETCH_ALLOW_PRIVATE: "false" });
    try {
      const where = join(strict.dir, "user");
      await mkdir(where);
      // As pasted into an interactive shell: no -e, no pipefail; the block must stop by itself.
      const pasted = await run("bash", ["-c", blockStarting(readme, RUN.tryIt)], {
        cwd: where,
        env: { ...env, CMS_URL: strict.baseUrl },
      }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(pasted.code, pasted.stdout).not.toBe(0);
      expect(pasted.stderr).toMatch(/^createResource failed: 422 ORIGIN_REFUSED .*resourceExternalURI/m);
      expect(`${pasted.stdout}${pasted.stderr}`).not.toContain("undefined");
      expect(pasted.stdout).toMatch(/"minVersion":1(\.0)?/); // the step before it ran
      expect(pasted.stdout).not.toMatch(/^HTTP\//m); // the steps after it did not
      await expect(access(join(where, "logo.png"))).rejects.toThrow();
    } finally {
      await strict.close();
    }
  }, 60_000);
});

/** The cms block's key output: put a file and a URL, get, ls, lock/info/unlock, link, rm. */
async function runCmsBlock(block: string) {
  const { stdout } = await bash(block);
  const lines = stdout.trim().split("\n");
  // Two puts, each "<resourceURI>  <size>  sha256:<hex>".
  expect(lines.filter((l) => /^[0-9a-z]{30}-acme\/logo\.png {2}.* {2}sha256:[0-9a-f]{64}$/.test(l))).toHaveLength(2);
  expect(stdout).toMatch(/^copy\.png {2}.*sha256 verified$/m);
  expect(Buffer.compare(await readFile(join(dir, "copy.png")), logo)).toBe(0);
  expect(lines).toContain("100");
  // ls (not a terminal: tab-separated, raw bytes): all three, each image/png, the URL's as its origin said.
  const listed = lines.filter((l) => l.split("\t").length === 4);
  expect(listed.map((l) => l.split("\t").slice(1, 3))).toEqual([
    ["image/png", String(logo.length)],
    ["image/png", String(logo.length)],
    ["image/png", String(logo.length)],
  ]);
  expect(stdout).toMatch(/^\S+ {2}until \d{4}-/m);
  expect(stdout).toMatch(/locked by you: /);
  expect(stdout).toMatch(/^unlocked [0-9a-z]{30}-acme$/m);
  // The link (the block removes the resource right after: its shape is what is left to check).
  expect(stdout).toMatch(
    /^http:\/\/127\.0\.0\.1:\d+\/cms\/v1\.0\/getData\/[0-9a-z]{30}-acme\/logo-2\.png\?expires=\d+&signature=\S+$/m,
  );
  expect(stdout).toMatch(/^deleted [0-9a-z]{30}-acme\/logo-2\.png$/m);
}
