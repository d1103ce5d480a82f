/**
 * `--compare <git ref>`: that commit checked out in a temporary git worktree (bench/.work), with
 * its own node_modules and its own build of the Node server bundle, so `bun src/bun.ts` and
 * `node dist/node/server.mjs` run exactly as shipped at that commit beside today's build.
 *
 * node_modules: a hard-link copy of this checkout's (`cp -al`: seconds, no disk) when every package
 * the ref locks is locked here identically (same lock entry, same path) — the ref then resolves the
 * same bytes, and packages only this checkout added are never imported by the ref's code; otherwise
 * the ref's own `npm ci`. The worktree is removed at the end unless `--keep`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { log } from "./util.js";

export interface CompareRef {
  ref: string;
  /** 12 hex digits. */
  commit: string;
  /** The worktree, and its dist/node/server.mjs. */
  dir: string;
  server: string;
  /** How its node_modules came to be (for the results). */
  modules: string;
  remove(): void;
}

function run(command: string, args: string[], cwd: string, timeout = 900_000): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}): ${(result.stderr || result.stdout || "").slice(-2000)}`);
  return result.stdout;
}

type Locked = Record<string, unknown>;
const lockedPackages = (lockText: string): Locked => {
  const { packages = {} } = JSON.parse(lockText) as { packages?: Locked };
  const { "": _root, ...rest } = packages;
  return rest;
};

/** True when every package `theirs` locks is locked identically in `ours` (ours may add packages). */
export function locksSubset(theirs: Locked, ours: Locked): boolean {
  return Object.entries(theirs).every(([key, entry]) => JSON.stringify(ours[key]) === JSON.stringify(entry));
}

export function prepareCompareRef(root: string, work: string, ref: string, keep: boolean): CompareRef {
  let commit: string;
  try {
    commit = run("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], root)
      .trim()
      .slice(0, 12);
  } catch {
    throw new Error(`--compare ${ref}: not a commit of this repository`);
  }
  const dir = path.join(work, `compare-${commit}`);
  const server = path.join(dir, "dist/node/server.mjs");
  const remove = () => {
    if (keep) return;
    spawnSync("git", ["-C", root, "worktree", "remove", "--force", dir], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
    spawnSync("git", ["-C", root, "worktree", "prune"], { stdio: "ignore" });
  };
  if (existsSync(server)) {
    log(`compare ${ref} = ${commit}: reusing ${path.relative(root, dir)}, kept by an earlier --keep run`);
    return { ref, commit, dir, server, modules: "kept from an earlier run", remove };
  }
  rmSync(dir, { recursive: true, force: true });
  spawnSync("git", ["-C", root, "worktree", "prune"], { stdio: "ignore" });
  run("git", ["worktree", "add", "--detach", dir, commit], root);
  try {
    const theirs = lockedPackages(readFileSync(path.join(dir, "package-lock.json"), "utf8"));
    const ours = lockedPackages(readFileSync(path.join(root, "package-lock.json"), "utf8"));
    let modules: string;
    if (locksSubset(theirs, ours)) {
      const same = Object.keys(theirs).length === Object.keys(ours).length;
      modules = same
        ? "hard-link copy (package-lock.json locks the same packages)"
        : `hard-link copy (its ${Object.keys(theirs).length} locked packages are locked identically here; this checkout adds ${Object.keys(ours).length - Object.keys(theirs).length})`;
      log(`compare ${commit}: node_modules — ${modules}`);
      run("cp", ["-al", path.join(root, "node_modules"), path.join(dir, "node_modules")], root);
    } else {
      modules = "its own npm ci (other locked packages)";
      log(`compare ${commit}: npm ci (its lockfile differs)…`);
      run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], dir);
    }
    log(`compare ${commit}: building its server bundle (its scripts/build.mjs)…`);
    run(process.execPath, ["scripts/build.mjs"], dir);
    if (!existsSync(server)) throw new Error(`building ${commit}: no ${server}`);
    return { ref, commit, dir, server, modules, remove };
  } catch (err) {
    remove();
    throw err;
  }
}
