/**
 * Starts the server as `npm start` runs it — `node dist/node/server.mjs`, the bundle of src/node.ts
 * that test/global-setup.ts builds — as a child process on 127.0.0.1:0 and reads its listening URL
 * from the first log line. Used for start-up, restart and memory tests, where the server must be a
 * process of its own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  stdout: string[];
  /**
   * The first log line (parsed JSON) that `match` accepts, already printed or the next to come: the
   * event a test awaits instead of polling `stdout`. Rejects if the process exits first. `from`: only
   * lines from that index of `stdout` on (`stdout.length` before an action: a line written for it).
   */
  waitForLine(match: (line: Record<string, unknown>) => boolean, from?: number): Promise<Record<string, unknown>>;
  /** Peak resident set size (VmHWM) of the server process, in bytes. */
  peakRss(): Promise<number>;
  stop(): Promise<number | null>;
}

export interface ExitResult {
  code: number | null;
  stderr: string;
  stdout: string;
}

/**
 * The server under test: the built Node server, or `bun src/bun.ts` with the pinned devDependency bun,
 * or a command of its own that starts one (a documented shell command, run from the repository root).
 */
export type ServerRuntime = "node" | "bun" | { command: string; args: string[] };
const COMMANDS: Record<"node" | "bun", [string, string[]]> = {
  node: [process.execPath, ["dist/node/server.mjs"]],
  bun: [join(ROOT, "node_modules", ".bin", "bun"), ["src/bun.ts"]],
};

function start(env: Record<string, string>, runtime: ServerRuntime = "node") {
  const [command, args] = typeof runtime === "string" ? COMMANDS[runtime] : [runtime.command, runtime.args];
  return spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", CMS_HOST: "127.0.0.1", CMS_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs a server expected to refuse to start; resolves with its exit code and output. */
export function runUntilExit(
  env: Record<string, string>,
  timeoutMs = 20_000,
  runtime: ServerRuntime = "node",
): Promise<ExitResult> {
  const child = start(env, runtime);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not exit within ${timeoutMs} ms; stdout: ${stdout}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

export async function spawnServer(
  env: Record<string, string>,
  runtime: ServerRuntime = "node",
): Promise<ServerProcess> {
  const child = start(env, runtime);
  const stdout: string[] = [];
  const lineListeners = new Set<(line: string) => void>();
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    child.stdout?.on("data", (d: Buffer) => {
      buffer += d.toString();
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        stdout.push(line);
        for (const listener of lineListeners) listener(line);
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        if (parsed.msg === "listening" && parsed.url) resolve(parsed.url);
        nl = buffer.indexOf("\n");
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    url,
    child,
    stdout,
    waitForLine(match, from = 0) {
      const parse = (line: string) => JSON.parse(line) as Record<string, unknown>;
      const found = stdout.slice(from).map(parse).find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const listener = (line: string) => {
          const parsed = parse(line);
          if (!match(parsed)) return;
          lineListeners.delete(listener);
          resolve(parsed);
        };
        lineListeners.add(listener);
        void exited.then((code) => {
          if (!lineListeners.delete(listener)) return;
          reject(new Error(`server exited (${code}) before the awaited log line`));
        });
      });
    },
    async peakRss() {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
      return kb * 1024;
    },
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
