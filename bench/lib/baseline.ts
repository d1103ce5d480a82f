/**
 * `--baseline=<git ref>`: the service as shipped at an earlier commit, measured in the same
 * interleaved rounds as today's build. This machine's speed drifts by up to 1.5× within an hour or
 * two (a bare node:http server's cold start read 86 ms, then 44 ms), so a figure from another day
 * says little about whether the code got faster; a ratio against the older build measured beside it
 * does. Used by the cold-start and ingest scenarios.
 *
 * The commit's tree is exported with `git archive` into bench/.work (no worktree to clean up), given
 * this checkout's node_modules, and built with its own scripts/build.mjs. Only a commit locked to the
 * same dependencies is accepted: with others, the comparison would measure the packages too.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { log } from "./util.js";

export interface Baseline {
  /** The ref as given, and the commit it named (12 hex digits). */
  ref: string;
  commit: string;
  /** The commit's tree, and its dist/node/server.mjs (what `npm start` ran at that commit). */
  dir: string;
  server: string;
}

function git(root: string, args: string[]): Buffer {
  const run = spawnSync("git", ["-C", root, ...args]);
  if (run.status !== 0)
    throw new Error(`git ${args.join(" ")}: ${run.stderr.toString().trim() || `exit ${run.status}`}`);
  return run.stdout;
}

/** The locked packages, without the root entry (its own version and scripts may differ). */
function lockedPackages(lockText: string): string {
  const { packages = {} } = JSON.parse(lockText) as { packages?: Record<string, unknown> };
  const { "": _root, ...rest } = packages;
  return JSON.stringify(rest);
}

export function prepareBaseline(root: string, work: string, ref: string): Baseline {
  let commit: string;
  try {
    commit = git(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])
      .toString()
      .trim()
      .slice(0, 12);
  } catch {
    throw new Error(`--baseline=${ref}: not a commit of this repository (git rev-parse found none)`);
  }
  const lockThen = git(root, ["show", `${commit}:package-lock.json`]).toString();
  if (lockedPackages(lockThen) !== lockedPackages(readFileSync(path.join(root, "package-lock.json"), "utf8"))) {
    throw new Error(
      `--baseline=${ref} (${commit}) locks other dependencies than this checkout: its build would measure them too; pick a commit with the same package-lock.json`,
    );
  }
  const dir = path.join(work, `baseline-${commit}`);
  const server = path.join(dir, "dist/node/server.mjs");
  // An export kept from an earlier run (--keep) is reused: a commit's tree never changes.
  if (!existsSync(server)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const exported = spawnSync(
      "bash",
      ["-c", 'set -o pipefail; git -C "$ROOT" archive --format=tar "$COMMIT" | tar -x -C "$DIR"'],
      {
        env: { ...process.env, ROOT: root, COMMIT: commit, DIR: dir },
        encoding: "utf8",
      },
    );
    if (exported.status !== 0) throw new Error(`exporting ${commit} (git archive | tar -x): ${exported.stderr.trim()}`);
    symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    const build = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: dir, encoding: "utf8" });
    if (build.status !== 0 || !existsSync(server))
      throw new Error(`building ${commit} (scripts/build.mjs) failed: ${(build.stderr || build.stdout).slice(-2000)}`);
  }
  log(`baseline ${ref} = ${commit}: ${path.relative(root, server)}`);
  return { ref, commit, dir, server };
}
