/**
 * An npm script as a user runs it (`npm run <script>`: npm → sh → the program), in a process group of
 * its own so a test can reach whatever a signal left behind. `ready` resolves with the first URL the
 * script prints that `readyPattern` matches; `tree()` lists every process below npm at that moment,
 * read from /proc/<pid>/stat (process state only, no socket tables).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface NpmScript {
  npm: ChildProcess;
  output(): string;
  /** The URL the script printed once it was serving. */
  ready: Promise<URL>;
  exited: Promise<number | null>;
  /** PIDs of npm and all its descendants, now. */
  tree(): Promise<number[]>;
  /** SIGKILL to the whole group: cleanup for a test that failed half-way. */
  killGroup(): void;
}

export function runNpmScript(
  script: string,
  options: { env: Record<string, string>; args?: string[]; readyPattern: RegExp; timeoutMs?: number },
): NpmScript {
  const args = ["run", "--silent", script, ...(options.args ? ["--", ...options.args] : [])];
  const npm = spawn("npm", args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => npm.on("exit", (code) => resolve(code)));
  const ready = new Promise<URL>((resolve, reject) => {
    const timeoutMs = options.timeoutMs ?? 90_000;
    const timer = setTimeout(
      () => reject(new Error(`${script}: no ready line in ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      output += d.toString();
      const match = options.readyPattern.exec(output);
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve(new URL(match[1]));
    };
    npm.stdout.on("data", onData);
    npm.stderr.on("data", onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before it was ready:\n${output}`));
    });
  });
  ready.catch(() => {}); // awaited by the test; this only keeps an early exit from being unhandled
  return {
    npm,
    output: () => output,
    ready,
    exited,
    tree: () => descendantsOf(npm.pid as number),
    killGroup() {
      try {
        process.kill(-(npm.pid as number), "SIGKILL");
      } catch {
        // the group is gone already
      }
    },
  };
}

/** `pid` and every process below it, from each process's parent in /proc/<pid>/stat. */
async function descendantsOf(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readStat(Number(entry));
    if (stat) parents.set(Number(entry), stat.ppid);
  }
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    for (const [child, parent] of parents) if (parent === found[i]) found.push(child);
  }
  return found;
}

async function readStat(pid: number): Promise<{ state: string; ppid: number } | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  // "pid (comm) state ppid …"; comm may hold spaces, so split after its last ")".
  const match = stat === undefined ? null : /\) (\S) (\d+)/.exec(stat.slice(stat.lastIndexOf(")")));
  return match ? { state: match[1] as string, ppid: Number(match[2]) } : undefined;
}

/** The processes of `pids` still running (a zombie waiting for its reaper has stopped). */
export async function stillRunning(pids: number[]): Promise<number[]> {
  const running: number[] = [];
  for (const pid of pids) {
    const stat = await readStat(pid);
    if (stat && stat.state !== "Z") running.push(pid);
  }
  return running;
}

/** True when something accepts a TCP connection on the URL's host and port. */
export function accepts(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
