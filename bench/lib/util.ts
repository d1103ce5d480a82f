/** Small helpers shared by the benchmark scenarios: statistics, formatting, loopback HTTP, ports. */
import { request } from "node:http";
import { createServer } from "node:net";
import { loadavg } from "node:os";

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: number[]): Summary {
  const finite = values.filter((v) => Number.isFinite(v));
  return {
    median: median(finite),
    min: finite.length ? Math.min(...finite) : Number.NaN,
    max: finite.length ? Math.max(...finite) : Number.NaN,
    n: finite.length,
  };
}

/** Significant-digit formatting that stays readable for both 0.42 and 48 213. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return "–";
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString("en-US").replace(/,/g, " ");
  if (abs === 0) return "0";
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(abs)));
  return value.toFixed(Math.min(decimals, 4));
}

/** `median (min–max)`. */
export const fmtSummary = (s: Summary, digits = 3) =>
  s.n === 0
    ? "–"
    : s.n === 1
      ? fmt(s.median, digits)
      : `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;

/** A ratio summary as `0.83× (0.79–0.88)`. */
export const fmtRatio = (s: Summary) => (s.n === 0 ? "–" : `${fmtSummary(s, 2)}×`);

/** A free TCP port on 127.0.0.1 (released before returning; the race is harmless on a bench box). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One loopback HTTP request, no keep-alive (agent: false), bounded by `timeoutMs`. */
export function http(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`timeout: ${url}`)));
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Polls `url` until it answers 200; rejects after `timeoutMs`. Returns the elapsed ms. */
export async function waitFor200(
  url: string,
  timeoutMs: number,
  intervalMs = 20,
  alive: () => boolean = () => true,
): Promise<number> {
  const started = performance.now();
  const deadline = started + timeoutMs;
  for (;;) {
    if (!alive()) throw new Error(`process exited before ${url} answered`);
    try {
      const res = await http(url, { timeoutMs: Math.max(100, deadline - performance.now()) });
      if (res.status === 200) return performance.now() - started;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Interleaves `runs` rounds over `targets` (A,B,C,B,C,A,…: each round rotated to spread position bias). */
export async function interleave<T>(
  targets: T[],
  runs: number,
  fn: (target: T, run: number) => Promise<void>,
): Promise<void> {
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < targets.length; i++) {
      await fn(targets[(i + run) % targets.length] as T, run);
    }
  }
}

/**
 * Samples a server's CPU seconds around a load run; the returned function gives them per second of
 * the run's wall time: all of it, and the user-mode part (NaN for a sampler not given).
 */
export function serverCpuDuring(total?: () => number, user?: () => number) {
  const before = { total: total?.() ?? 0, user: user?.() ?? 0 };
  return (wallSec: number) => ({
    serverCpu: total ? (total() - before.total) / wallSec : Number.NaN,
    serverUserCpu: user ? (user() - before.user) / wallSec : Number.NaN,
  });
}

export const loadAverage = () =>
  loadavg()
    .map((v) => v.toFixed(2))
    .join(" ");

export const log = (...args: unknown[]) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${args.join(" ")}\n`);
