/**
 * HEAD load with ApacheBench (`ab -k -i`, Debian's apache2-utils): wrk never tells its parser that a
 * request was HEAD, so it waits for the Content-Length bytes that never come and counts 0 req/s.
 * ab is single-threaded like our wrk runs; its result is shaped like wrk's so tables take either.
 */
import { spawn } from "node:child_process";
import { serverCpuDuring } from "./util.js";
import type { WrkResult } from "./wrk.js";

export async function runAbHead(options: {
  url: string;
  connections: number;
  durationSec: number;
  timeoutSec?: number;
  cpuSeconds?: () => number;
  userCpuSeconds?: () => number;
}): Promise<WrkResult> {
  const args = [
    "-k",
    "-i",
    "-q",
    "-c",
    String(options.connections),
    "-t",
    String(options.durationSec),
    "-n",
    "100000000",
    "-s",
    String(options.timeoutSec ?? 30),
    options.url,
  ];
  const cpu = serverCpuDuring(options.cpuSeconds, options.userCpuSeconds);
  const started = performance.now();
  const { out, code } = await new Promise<{ out: string; code: number | null }>((resolve, reject) => {
    const child = spawn("ab", args, { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d));
    child.stderr.on("data", (d: Buffer) => (text += d));
    const guard = setTimeout(() => child.kill("SIGKILL"), (options.durationSec + 60) * 1000);
    child.on("error", reject);
    child.on("exit", (exitCode) => {
      clearTimeout(guard);
      resolve({ out: text, code: exitCode });
    });
  });
  const wall = (performance.now() - started) / 1000;
  const { serverCpu, serverUserCpu } = cpu(wall);
  const field = (label: string) => {
    const m = new RegExp(`^${label}:?\\s+([\\d.]+)`, "m").exec(out);
    return m ? Number(m[1]) : Number.NaN;
  };
  const requests = field("Complete requests");
  const durationSec = field("Time taken for tests");
  if (!Number.isFinite(requests) || !Number.isFinite(durationSec)) throw new Error(`ab failed (exit ${code}): ${out}`);
  const failed = field("Failed requests");
  const non2xx = field("Non-2xx responses");
  const bytes = field("Total transferred");
  return {
    requests,
    durationSec,
    bytes,
    rps: requests / durationSec,
    mbps: bytes / durationSec / 1e6,
    p50Ms: field("\\s*50%"),
    p99Ms: field("\\s*99%"),
    maxMs: field("\\s*100%"),
    errors: {
      connect: 0,
      read: Number.isFinite(failed) ? failed : 0,
      write: 0,
      status: Number.isFinite(non2xx) ? non2xx : 0,
      timeout: 0,
    },
    serverCpu,
    serverUserCpu,
  };
}
