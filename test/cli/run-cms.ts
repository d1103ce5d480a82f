/** Runs the `cms` command line as a user does: a child process of bin/cms.mjs, stdio piped (no TTY). */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const BIN = fileURLToPath(new URL("../../bin/cms.mjs", import.meta.url));

export interface CmsResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function startCms(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): { child: ChildProcess; done: Promise<CmsResult> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: cwd, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const done = new Promise<CmsResult>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

export const runCms = (args: string[], env: Record<string, string>, cwd: string) => startCms(args, env, cwd).done;
