/**
 * Issue 36's work budget, syscall lane: the built server (`node dist/node/server.mjs`, as shipped,
 * access log on) under Debian's strace, attached (`strace -f -c -p`) for a batch of requests of one
 * kind, one after another (fetch keeps the connection alive); its syscalls a request against test/budget/work-budget.json.
 * An extra lookup or write shows up here as extra reads, locks and writes even where the in-process
 * lane (work-budget.test.ts) is not looking.
 *
 * Counted: every syscall but those whose number follows the machine's timing rather than the
 * request's work — futex (thread-pool hand-offs, GC helpers), the event loop's epoll waits and
 * registrations (libuv batches epoll_ctl through io_uring_enter where the kernel lets it: CI's
 * machine does, this one does not, so one is counted as the other would be: not at all),
 * memory mapping (the GC), signal masks, and a thread starting or ending inside the batch (a
 * helper thread V8 or libuv starts when it needs one: clone3, then the thread's own prctl,
 * set_robust_list and rseq, seen once in a batch of HEADs). What remains still varies a little (a log write that
 * carries two lines instead of one, a timer that fires inside the batch: seen 19 to 20 log writes a
 * batch), so a batch may exceed budget × requests by 8 syscalls: well under one extra syscall a
 * request (20 a batch), which is what an extra lookup or write costs at the least.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrigin, type Origin } from "../helpers/origin.js";
import { spawnServer, type ServerProcess } from "../helpers/spawn-server.js";
import { BUDGET, type Counted, overBudget, printOnly, report, SERVICE_ENV } from "./budget.js";
import { type Kind, prepareKinds } from "./request-kinds.js";

const TIMING_BOUND =
  /^(futex|epoll_wait|epoll_pwait|epoll_pwait2|epoll_ctl|io_uring_enter|mmap|munmap|mprotect|madvise|brk|rt_sigprocmask|sched_yield|restart_syscall|clone|clone3|set_robust_list|rseq|prctl|sigaltstack|gettid|exit)$/;

let dir: string;
let origin: Origin;
let server: ServerProcess;
let kinds: Kind[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cms-budget-"));
  origin = await startOrigin();
  server = await spawnServer({
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_HOST: "127.0.0.1",
    CMS_PORT: "0",
    CMS_FETCH_ALLOW_PRIVATE: "true",
    ...SERVICE_ENV,
  });
  kinds = await prepareKinds(server.url, origin);
});

afterAll(async () => {
  await server?.stop();
  await origin?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** strace attached to every thread of `pid`; resolves once it says so (its stderr), not after a pause. */
async function attach(pid: number, out: string): Promise<ChildProcess> {
  const strace = spawn("strace", ["-f", "-c", "-o", out, "-p", String(pid)], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let text = "";
    strace.stderr?.on("data", (d: Buffer) => {
      text += d.toString();
      if (/Process \d+ attached/.test(text)) resolve();
    });
    strace.once("exit", (code) => reject(new Error(`strace exited (${code}): ${text}`)));
  });
  return strace;
}

async function detach(strace: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => strace.once("exit", () => resolve()));
  strace.kill("SIGINT");
  await exited;
}

/** strace -c's table: syscall → calls. */
function parseSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split("\n")) {
    const cells = line.trim().split(/\s+/);
    if (cells.length < 5 || !/^\d/.test(cells[0] ?? "")) continue;
    const name = cells[cells.length - 1] as string;
    if (name === "total") continue;
    calls.set(name, Number(cells[3]));
  }
  return calls;
}

const send = async (kind: Kind) => {
  const res = await fetch(`${server.url}${kind.path}`, kind.init);
  await res.arrayBuffer();
  if (res.status !== kind.status) throw new Error(`${kind.name}: ${res.status}, expected ${kind.status}`);
};

describe("work budget: syscalls of the server per request (issue 36)", () => {
  it("every request kind stays within its budget", { timeout: 120_000 }, async () => {
    const pid = server.child.pid as number;
    const counted: Counted[] = [];
    for (const kind of kinds) {
      for (let i = 0; i < 3; i++) await send(kind);
      const out = join(dir, `strace-${kind.name}.txt`);
      const strace = await attach(pid, out);
      for (let i = 0; i < BUDGET.requests; i++) await send(kind);
      await detach(strace);
      expect(existsSync(out), "strace wrote its summary").toBe(true);
      const calls = [...parseSummary(readFileSync(out, "utf8"))].sort((a, b) => b[1] - a[1]);
      const work = calls.filter(([name]) => !TIMING_BOUND.test(name));
      counted.push({
        kind: kind.name,
        total: work.reduce((n, [, c]) => n + c, 0),
        detail: calls
          .map(([name, c]) => `  ${String(c).padStart(5)} ${name}${TIMING_BOUND.test(name) ? " (not counted)" : ""}`)
          .join("\n"),
      });
    }
    report("syscalls", counted);
    if (printOnly) return;
    const { fraction, absolute } = BUDGET.syscalls.slack;
    const failure = overBudget("syscalls", counted, BUDGET.syscalls.perRequest, (b) =>
      Math.floor(b * BUDGET.requests * (1 + fraction) + absolute),
    );
    expect(failure, "over the work budget (test/budget/work-budget.json)").toBe("");
  });
});
