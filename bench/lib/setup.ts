/** Tools the benchmark needs (wrk, nginx from Debian; Bun from npm) and a description of the machine. */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import path from "node:path";
import { log } from "./util.js";

const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;

/** Debian package of each tool (ab: HEAD load in --compare, lib/ab.ts). */
const PACKAGE: Record<string, string> = { wrk: "wrk", nginx: "nginx-light", ab: "apache2-utils" };

/** Installs wrk, nginx and ab with apt when missing (needs root); throws with a hint otherwise. */
export function ensureSystemTools(): void {
  const missing = Object.keys(PACKAGE).filter((tool) => !has(tool));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `missing ${missing.join(", ")}: install them (e.g. sudo apt-get install -y wrk nginx-light apache2-utils) and rerun`,
    );
  }
  log(`installing ${missing.join(", ")} with apt-get…`);
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit", timeout: 300_000 });
  // nginx-light is enough (core + sendfile); fall back to the full package where it does not exist.
  const packages = missing.map((tool) => PACKAGE[tool] as string);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const first = spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
    stdio: "inherit",
    env,
    timeout: 600_000,
  });
  if (first.status !== 0) {
    const full = missing.map((tool) => (tool === "nginx" ? "nginx" : (PACKAGE[tool] as string)));
    execFileSync("apt-get", ["install", "-y", "-qq", ...full], { stdio: "inherit", env, timeout: 600_000 });
  }
}

/** Path of the project's Bun (the pinned devDependency `npm ci` installs), or null if it is missing. */
export function ensureBun(root: string): string | null {
  const bin = path.join(root, "node_modules/.bin/bun");
  if (!existsSync(bin)) {
    log(`bun is missing from node_modules (run npm ci): Bun rows are skipped`);
    return null;
  }
  return bin;
}

function output(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 20_000 });
  return `${result.stdout ?? ""}${result.stderr ?? ""}`.trim();
}

export interface MachineInfo {
  date: string;
  cpu: string;
  cores: number;
  memory: string;
  kernel: string;
  os: string;
  node: string;
  bun: string;
  nginx: string;
  wrk: string;
}

export function machineInfo(bun: string | null): MachineInfo {
  const osRelease = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
  return {
    date: new Date().toISOString(),
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    kernel: output("uname", ["-r"]),
    os: /PRETTY_NAME="([^"]*)"/.exec(osRelease)?.[1] ?? "unknown",
    node: process.version,
    bun: bun ? output(bun, ["--version"]) : "not installed",
    nginx: output("nginx", ["-v"]).replace(/^nginx version:\s*/, ""),
    wrk:
      output("wrk", ["-v"])
        .split("\n")[0]
        ?.replace(/\s+Copyright.*$/, "") ?? "unknown",
  };
}
