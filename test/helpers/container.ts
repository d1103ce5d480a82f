/**
 * The service's container image under podman (issue 42): built from the repository's Containerfile
 * and run attached, its log lines read as they come, as test/helpers/spawn-server.ts does for a process.
 * podman runs with this machine's settings (scripts/container-base.mjs) and host networking: the
 * server binds port 0 inside the container, which is the host's port, and says which in its log.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { PODMAN_FLAGS, podmanEnv } from "../../scripts/container-base.mjs";

const execFileAsync = promisify(execFile);

/** Runs podman to the end; resolves with its stdout (rejects with its stderr in the message). */
export async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  const { stdout } = await execFileAsync("podman", [...PODMAN_FLAGS, ...args], {
    env: podmanEnv(),
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

export interface RunningContainer {
  /** http://127.0.0.1:<port>, from the "listening" line. */
  url: string;
  /** The first log line (parsed) that `match` accepts, printed already or still to come. */
  waitForLine(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** The container's exit code, once `podman run` returns. */
  exited: Promise<number | null>;
}

/** `podman run` attached (so its exit code is the server's), with `--rm`: resolves once the server listens. */
export function runContainer(name: string, image: string, options: string[]): Promise<RunningContainer> {
  const child: ChildProcess = spawn(
    "podman",
    [...PODMAN_FLAGS, "run", "--rm", "--name", name, "--network", "host", ...options, image],
    { env: podmanEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      return; // not a log line
    }
    for (const wake of [...waiters]) wake();
  });
  const waitForLine: RunningContainer["waitForLine"] = (match) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
      void exited.then((code) => {
        if (!waiters.has(check)) return;
        waiters.delete(check);
        reject(new Error(`container exited (${code}) before the awaited log line: ${stderr}`));
      });
    });
  return waitForLine((line) => line.msg === "listening").then((line) => ({
    // The server binds 0.0.0.0 inside; the host reaches it on loopback.
    url: String(line.url).replace("0.0.0.0", "127.0.0.1"),
    waitForLine,
    exited,
  }));
}
