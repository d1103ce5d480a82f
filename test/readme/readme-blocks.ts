/**
 * The ```sh blocks of README.md and of the docs pages its text moved to (issue 40: "the rest in
 * docs/, … its sh blocks still run by tests"), and what becomes of each under test: run as written
 * (by the file named), or not run, for the reason given. A block is known by how its first line
 * starts, so a new block, or one whose first line changed, matches nothing and fails the inventory in
 * blocks.test.ts. docs/scale-out.md's named blocks (```sh scale-out:<name>) are its recipe's, run by
 * test/multi/two-instances.test.ts (test/multi/doc-blocks.ts), and not counted here.
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN } from "../cli/run-cms.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const README = join(ROOT, "README.md");

/** The pages whose blocks are inventoried: the README and every docs page it links that took its text. */
export const PAGES = [
  "README.md",
  "docs/configuration.md",
  "docs/api.md",
  "docs/errors.md",
  "docs/auth.md",
  "docs/cli.md",
  "docs/client.md",
  "docs/images.md",
  "docs/caching.md",
  "docs/webhooks.md",
  "docs/metrics.md",
  "docs/security.md",
  "docs/deploy.md",
  "docs/scale-out.md",
  "docs/architecture.md",
  "docs/development.md",
] as const;

/** Each page's text, by its path from the repository's root. */
export async function readPages(): Promise<Map<string, string>> {
  const texts = await Promise.all(PAGES.map((page) => readFile(join(ROOT, page), "utf8")));
  return new Map(PAGES.map((page, i) => [page, texts[i] as string]));
}

/** All pages as one text, in PAGES order: what blockStarting and shellBlocks look through. */
export const allPages = async (): Promise<string> => [...(await readPages()).values()].join("\n");

/** The blocks a test runs as written, by the start of their first line. */
export const RUN = {
  /** README's *Try it*: apiversion, createResource, getData (blocks.test.ts). */
  tryIt: "CMS=${CMS_URL:-",
  /** README's `cms` block after *Try it* (blocks.test.ts). */
  cms: "cms put logo.png ",
  /** docs/auth.md: the dev IdP and the server with auth on, a token, calls with and without it (auth-blocks.test.ts). */
  auth: "IDP=",
  /** docs/auth.md: `cms login`, a command with its token, `cms logout` (auth-blocks.test.ts). */
  login: "cms login ",
} as const;

/** The blocks no test runs, each with why not. */
export const NOT_RUN: ReadonlyArray<{ start: string; why: string }> = [
  {
    start: "npm ci && npm start",
    why:
      "the quick start: `npm ci` would reinstall the node_modules every test shares and `npm test` is this suite; " +
      "`npm start` runs in the auth block and in test/runtime/npm-start.test.ts",
  },
  {
    start: "cp .dev.vars.example .dev.vars",
    why:
      "Workers: its deploy steps need a Cloudflare account, and `npm run dev:worker` takes the fixed port 8787 " +
      "and writes .dev.vars and .wrangler/ into the repository",
  },
  {
    start: "podman build --format docker -t content-resource-service .",
    why:
      "docs/deploy.md's container build: test/container/image.test.ts builds the same Containerfile, with the " +
      "host's npm cache and CA mounted and the base image made first (no registry here)",
  },
  {
    start: "printf 'cafile=/run/ca.crt",
    why: "docs/deploy.md: a build behind a TLS-inspecting proxy with a CA file of the reader's; the test mounts the host's the same way",
  },
  {
    start: "podman volume create cms-data",
    why:
      "docs/deploy.md's container run on the fixed port 9082 with -p; test/container/image.test.ts runs the image " +
      "with host networking on a port of its own (CMS_PORT=0) and a volume of its own",
  },
  {
    start: "git pull ",
    why: "docs/deploy.md's upgrade: a new release; test/container/image.test.ts replaces a container on the same volume",
  },
  {
    start: "CMS_STORAGE=s3 CMS_S3_ENDPOINT=https://s3.",
    why:
      "several instances on AWS S3 and Turso, with secrets left for the reader; docs/scale-out.md's commands " +
      "for the same setup on loopback are run by test/multi/two-instances.test.ts",
  },
];

/** Every ```sh block of a text (a page, or allPages()), in order. */
export function shellBlocks(readme: string): string[] {
  return [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

/** The one block whose first line starts with `start`. */
export function blockStarting(readme: string, start: string): string {
  const found = shellBlocks(readme).filter((block) => block.startsWith(start));
  if (found.length !== 1) throw new Error(`the pages have ${found.length} sh blocks starting "${start}", not one`);
  return found[0] as string;
}

/** The block's command lines: comment lines dropped, trailing comments cut. */
export const commandLines = (block: string): string[] =>
  block
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .map((line) => line.replace(/\s+# .*$/, ""));

/**
 * Puts `cms` on a PATH as an installed package's bin is (the README's alias for this repository,
 * which bash -c would not expand); returns the folder to prepend to PATH.
 */
export async function installCms(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "cms"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(join(bin, "cms"), 0o755);
  return bin;
}
