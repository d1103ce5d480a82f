/**
 * Server processes under test: spawn, wait until they answer, measure (peak RSS via VmHWM, CPU time
 * via /proc/<pid>/stat, both summed over the process and its children, e.g. nginx's worker) and stop.
 * Every process started here is registered, and `stopAll` (called on exit and on signals) kills them.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import { freePort, sleep, waitFor200 } from "./util.js";

export interface Server {
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  child: ChildProcess;
  /** Pids whose RSS and CPU count for this server (the process and, for nginx, its workers). */
  pids(): number[];
  /** Sum of VmHWM (peak RSS) in bytes since start or the last `resetPeak`. */
  peakRss(): number;
  /** Current RSS in bytes. */
  rss(): number;
  /** Resets VmHWM (Linux ≥ 4.0: `echo 5 > /proc/<pid>/clear_refs`); false if not permitted. */
  resetPeak(): boolean;
  /** user+system CPU seconds consumed so far (all threads). */
  cpuSeconds(): number;
  /** User-mode CPU seconds alone: the process's own code, without the kernel's share of its I/O. */
  userCpuSeconds(): number;
  stderr(): string;
  /** Set once the process has exited: how, and whether we asked it to. */
  exited(): { code: number | null; signal: string | null; expected: boolean } | null;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let shuttingDown = false;

export async function stopAll(): Promise<void> {
  shuttingDown = true;
  await Promise.all([...live].map((child) => stopChild(child)));
}

function killQuietly(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    live.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killQuietly(child, "SIGTERM");
  const killed = await Promise.race([exited.then(() => true), sleep(6000).then(() => false)]);
  if (!killed) {
    killQuietly(child, "SIGKILL");
    await Promise.race([exited, sleep(2000)]);
  }
  live.delete(child);
}

/** Kill everything on the way out, whatever the reason (normal end, error, Ctrl-C). */
let hooked = false;
export function installExitHooks() {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const child of live) killQuietly(child, "SIGKILL");
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n[bench] ${signal}: stopping servers\n`);
      void stopAll().finally(() => process.exit(130));
    });
  }
}

/** Direct children (nginx's workers). Only the main thread forks in the servers we run. */
function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** A `/proc/<pid>/status` size (VmRSS, VmHWM…) in bytes; 0 where there is none (not Linux, exited). */
export function statusField(pid: number, field: string): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]);
    return Number.isFinite(kb) ? kb * 1024 : 0;
  } catch {
    return 0;
  }
}

function cpuTicks(pid: number, userOnly = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command: utime is the 14th field overall, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + (userOnly ? 0 : Number(fields[12]));
  } catch {
    return 0;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Given a port, the URL that answers 200 once the server is ready. */
  readyPath?: string;
  /** Use this port instead of picking a free one. */
  port?: number;
  timeoutMs?: number;
  /** Where stdout goes: a file path, or "ignore" (= /dev/null). Default "ignore". */
  stdout?: string;
}

/** Starts a server listening on `PORT`/`CMS_PORT` (both set) and waits for `readyPath` to answer 200. */
export async function startServer(options: StartOptions): Promise<Server> {
  const port = options.port ?? (await freePort());
  const stdout = !options.stdout || options.stdout === "ignore" ? "ignore" : openSync(options.stdout, "a");
  const child = spawn(options.command, options.args, {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      PORT: String(port),
      CMS_PORT: String(port),
      CMS_HOST: "127.0.0.1",
      ...options.env,
    },
    stdio: ["ignore", stdout, "pipe"],
  });
  live.add(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-8000);
  });
  let exitInfo: { code: number | null; signal: string | null; expected: boolean } | null = null;
  let stopping = false;
  child.on("exit", (code, signal) => {
    live.delete(child);
    exitInfo = { code, signal, expected: stopping || shuttingDown };
    if (!exitInfo.expected) {
      // Not asked to stop: a crash, or something else on this shared machine killed it.
      process.stderr.write(
        `[bench] ${options.name} (pid ${child.pid}) exited unexpectedly: code ${code}, signal ${signal}\n${stderr.slice(-1000)}\n`,
      );
    }
  });
  const url = `http://127.0.0.1:${port}`;
  const pid = child.pid as number;
  const pids = () => [pid, ...childrenOf(pid)];
  const server: Server = {
    name: options.name,
    url,
    port,
    child,
    pids,
    peakRss: () => pids().reduce((sum, p) => sum + statusField(p, "VmHWM"), 0),
    rss: () => pids().reduce((sum, p) => sum + statusField(p, "VmRSS"), 0),
    resetPeak: () => {
      try {
        for (const p of pids()) writeFileSync(`/proc/${p}/clear_refs`, "5");
        return true;
      } catch {
        return false;
      }
    },
    cpuSeconds: () => pids().reduce((sum, p) => sum + cpuTicks(p), 0) / CLOCK_TICKS,
    userCpuSeconds: () => pids().reduce((sum, p) => sum + cpuTicks(p, true), 0) / CLOCK_TICKS,
    stderr: () => stderr,
    exited: () => exitInfo,
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
  };
  try {
    await waitFor200(
      `${url}${options.readyPath ?? "/healthz"}`,
      options.timeoutMs ?? 30_000,
      20,
      () => child.exitCode === null,
    );
  } catch (err) {
    await server.stop();
    throw new Error(`${options.name} did not start: ${(err as Error).message}\n${stderr}`);
  }
  return server;
}
