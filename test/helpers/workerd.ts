/**
 * The Worker as deployed, run locally: bundled exactly as `wrangler deploy --dry-run --outdir` does,
 * then served by Miniflare on 127.0.0.1:0 with R2 (BLOBS) and D1 (DB) bindings and the assets
 * directory, D1 migrated from drizzle/ with drizzle's D1 migrator. Bundle once, start as often as
 * needed: with `persistDir`, R2 and D1 live on disk, so a new instance over the same directory is a
 * restart of the Worker that keeps its state.
 */
import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { drizzle } from "drizzle-orm/d1";
import { migrate } from "drizzle-orm/d1/migrator";
import { Miniflare } from "miniflare";
import { inject } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
// Must match wrangler.toml: the bundle is the deployed one, the runtime options mirror its settings.
const COMPATIBILITY_DATE = "2026-04-01";
const COMPATIBILITY_FLAGS = ["nodejs_als"];

export interface WorkerBundle {
  scriptPath: string;
  modulesRoot: string;
}

export interface WorkerdServer {
  url: string;
  mf: Miniflare;
  /** Peak resident set size (VmHWM) of the workerd process this instance started, in bytes. */
  peakRss(): Promise<number>;
  /** Disposes of the instance (and its workerd process); persisted state stays. */
  close(): Promise<void>;
}

declare module "vitest" {
  interface ProvidedContext {
    /** The run's Worker bundle, made once by test/global-setup.ts. */
    workerBundleDir: string;
  }
}

/** The run's Worker bundle (test/global-setup.ts), read-only to every instance started from it. */
export function sharedWorkerBundle(): WorkerBundle {
  const dir = inject("workerBundleDir");
  return { scriptPath: join(dir, "worker.js"), modulesRoot: dir };
}

/** Bundles src/worker.ts into `outdir` as `wrangler deploy` would (its [build] step vendors the explorer assets). */
export async function bundleWorker(outdir: string): Promise<WorkerBundle> {
  await promisify(execFile)(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", outdir], {
    cwd: ROOT,
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    timeout: 60_000,
  });
  return { scriptPath: join(outdir, "worker.js"), modulesRoot: outdir };
}

/** PIDs of the workerd processes this test process has spawned (its children named workerd). */
async function workerdChildren(): Promise<Set<number>> {
  const pids = new Set<number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so split after its ")".
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const match = /^\d+ \((.*)\) \S+ (\d+)/s.exec(stat);
    if (match?.[1] === "workerd" && Number(match[2]) === process.pid) pids.add(Number(entry));
  }
  return pids;
}

export async function startWorkerd(
  bundle: WorkerBundle,
  options: {
    bindings: Record<string, string>;
    persistDir?: string;
    /** R2's directory instead of `<persistDir>/r2`: two Workers with their own D1 on one bucket. */
    r2PersistDir?: string;
    /** A fixed port (e.g. one CMS_PUBLIC_URL names) instead of any free one. */
    port?: number;
    /** Each line the Worker writes to its console (then not echoed to this process's output). */
    onLog?: (message: string) => void;
  },
): Promise<WorkerdServer> {
  const before = await workerdChildren();
  const mf = new Miniflare({
    modules: true,
    scriptPath: bundle.scriptPath,
    modulesRoot: bundle.modulesRoot, // module names are relative to it (the default, the cwd, is not above /tmp)
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: COMPATIBILITY_FLAGS,
    host: "127.0.0.1",
    port: options.port ?? 0,
    cf: false, // no download of Cloudflare's request metadata (offline)
    r2Buckets: ["BLOBS"],
    d1Databases: ["DB"],
    // Without a directory both live in memory and go with the instance.
    ...(options.persistDir
      ? { r2Persist: join(options.persistDir, "r2"), d1Persist: join(options.persistDir, "d1") }
      : {}),
    ...(options.r2PersistDir ? { r2Persist: options.r2PersistDir } : {}),
    assets: {
      directory: join(ROOT, "public"),
      binding: "ASSETS",
      routerConfig: { has_user_worker: true, invoke_user_worker_ahead_of_assets: true },
    },
    bindings: options.bindings,
    ...(options.onLog ? { handleStructuredLogs: ({ message }: { message: string }) => options.onLog?.(message) } : {}),
  });
  try {
    const url = await mf.ready;
    // One migration mechanism per database: drizzle's D1 migrator over the same SQL (it skips what a
    // persisted database already has).
    await migrate(drizzle(await mf.getD1Database("DB")), { migrationsFolder: join(ROOT, "drizzle") });
    const pids = [...(await workerdChildren())].filter((pid) => !before.has(pid));
    return {
      url: url.origin,
      mf,
      async peakRss() {
        if (pids.length === 0) throw new Error("no workerd process found among this process's children");
        let peak = 0;
        for (const pid of pids) {
          const status = await readFile(`/proc/${pid}/status`, "utf8");
          peak = Math.max(peak, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) * 1024);
        }
        return peak;
      },
      close: () => mf.dispose(),
    };
  } catch (err) {
    await mf.dispose();
    throw err;
  }
}

/** A Worker from the run's bundle (sharedWorkerBundle), as startWorkerd starts it. */
export function startBundledWorkerd(options: Parameters<typeof startWorkerd>[1]): Promise<WorkerdServer> {
  return startWorkerd(sharedWorkerBundle(), options);
}

/**
 * fetch, retrying a GET or HEAD once when its connection closed before any answer (RFC 9112
 * §9.3.1 allows it; browsers do it). workerd closes idle connections without sending a
 * Keep-Alive hint, and undici keeps an idle one by a coarse timer that a busy event loop delays (a
 * 12 MiB hash under load): the next request can then go out on a connection workerd has just
 * closed ("other side closed": seen once, in a full run at load 13). A request with a body is never
 * sent twice.
 */
export async function retryingReusedConnections(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(input, init);
  } catch (err) {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    if ((method !== "GET" && method !== "HEAD") || code !== "UND_ERR_SOCKET") throw err;
    return fetch(input, init);
  }
}
