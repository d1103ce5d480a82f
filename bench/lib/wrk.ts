/**
 * Runs `wrk` (one thread: on 2 cores the load generator gets one, the server the other) with a Lua
 * script whose done() prints exact counters and latency percentiles as one JSON line.
 */
import { spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serverCpuDuring } from "./util.js";

export interface WrkOptions {
  url: string;
  connections: number;
  durationSec: number;
  threads?: number;
  /** Per-request timeout (wrk counts slower responses as timeouts). */
  timeoutSec?: number;
  /** Lua defining `request` (and/or `init`, `response`); a done() reporter is appended. */
  lua?: string;
  /** Directory for the generated script. */
  workDir: string;
  /** Server whose CPU time is sampled around the run. */
  cpuSeconds?: () => number;
  userCpuSeconds?: () => number;
}

export interface WrkResult {
  requests: number;
  durationSec: number;
  bytes: number;
  rps: number;
  /** MB/s (10^6 bytes per second) of response bytes, headers included. */
  mbps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  /** Server CPU seconds per second of wall time during the run (1.0 = one core busy). */
  serverCpu: number;
  /** Its user-mode part (NaN when not sampled). */
  serverUserCpu: number;
}

const DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p99_us":%d,"max_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;

let scriptCounter = 0;

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const script = path.join(options.workDir, `wrk-${process.pid}-${scriptCounter++}.lua`);
  writeFileSync(script, `${options.lua ?? ""}\n${DONE}`);
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.durationSec}s`,
    `--timeout`,
    `${options.timeoutSec ?? 10}s`,
    "-s",
    script,
    options.url,
  ];
  const cpu = serverCpuDuring(options.cpuSeconds, options.userCpuSeconds);
  const started = performance.now();
  // wrk has read its script once it exits: one file per run piled up in bench/.work otherwise.
  const ran = new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve, reject) => {
    const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (err += d));
    // wrk stops by itself after -d; this only guards against a wedged run.
    const guard = setTimeout(
      () => child.kill("SIGKILL"),
      (options.durationSec + (options.timeoutSec ?? 10) + 30) * 1000,
    );
    child.on("error", reject);
    child.on("exit", (exitCode) => {
      clearTimeout(guard);
      resolve({ stdout: out, stderr: err, code: exitCode });
    });
  });
  const { stdout, stderr, code } = await ran.finally(() => rmSync(script, { force: true }));
  const wall = (performance.now() - started) / 1000;
  const { serverCpu, serverUserCpu } = cpu(wall);
  const line = stdout.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`wrk failed (exit ${code}): ${stderr || stdout}`);
  const r = JSON.parse(line.slice("BENCH_JSON ".length)) as Record<string, number>;
  const durationSec = (r.duration_us ?? 0) / 1e6;
  return {
    requests: r.requests ?? 0,
    durationSec,
    bytes: r.bytes ?? 0,
    rps: (r.requests ?? 0) / durationSec,
    mbps: (r.bytes ?? 0) / durationSec / 1e6,
    p50Ms: (r.p50_us ?? 0) / 1000,
    p99Ms: (r.p99_us ?? 0) / 1000,
    maxMs: (r.max_us ?? 0) / 1000,
    errors: {
      connect: r.connect ?? 0,
      read: r.read ?? 0,
      write: r.write ?? 0,
      status: r.status ?? 0,
      timeout: r.timeout ?? 0,
    },
    serverCpu,
    serverUserCpu,
  };
}

export const totalErrors = (r: WrkResult) =>
  r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;

/** Lua: every request is a GET with a random single 64 KiB (`len`) range inside `size` bytes; fixed seed. */
export const rangeLua = (size: number, len: number, seed = 42) => `
math.randomseed(${seed})
local size, len = ${size}, ${len}
request = function()
  local s = math.random(0, size - len)
  return wrk.format("GET", nil, { ["Range"] = "bytes=" .. s .. "-" .. (s + len - 1) })
end
`;
