/**
 * A stock nginx `proxy_cache` in front of an origin on 127.0.0.1, as a CDN would stand there: the
 * cache honours the origin's headers (Cache-Control, Vary, ETag) and nothing is overridden — no
 * proxy_cache_valid, no proxy_ignore_headers, no proxy_cache_lock, no proxy_force_ranges. Debian's
 * /usr/sbin/nginx (scripts/ensure-system-packages.mjs), as an unprivileged-port foreground process
 * whose pid file, logs, temp files and cache all live in a temp dir. Every request nginx handles
 * is logged with its $upstream_cache_status and $upstream_addr, so a test counts the requests that
 * reached the origin (`originRequests`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { join } from "node:path";
import { freePort } from "./ports.js";

export const NGINX = "/usr/sbin/nginx";

export interface NginxCache {
  /** http://127.0.0.1:<port> of the cache. */
  baseUrl: string;
  url(path: string): string;
  /** One line per request nginx has logged: cache status (HIT, MISS, EXPIRED, UPDATING, STALE, -) and upstream. */
  log(): Promise<{ cache: string; upstream: string; status: number; request: string }[]>;
  /** How many logged requests (for URLs containing `path`, when given) nginx passed to the origin. */
  originRequests(path?: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The top of an nginx.conf whose pid file, logs and temp files all live in `dir`, up to the inside
 * of its `http {` block (the caller adds the rest and the closing brace).
 */
export function nginxInFolder(dir: string): string {
  // nginx started by root runs its workers as `nobody`, who could not write into our 0700 temp dir.
  const user = process.getuid?.() === 0 ? "user root root;" : "";
  return `${user}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;`;
}

/**
 * nginx refuses `listen 127.0.0.1:0` ("invalid port"), so its port is probed; one taken between the
 * probe and nginx's bind ("Address already in use") means another try on a fresh port.
 */
export async function startNginxCache(origin: string): Promise<NginxCache> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), origin);
    } catch (err) {
      if (attempt >= 4 || !(err instanceof Error && /Address already in use/.test(err.message))) throw err;
    }
  }
}

async function startOn(port: number, origin: string): Promise<NginxCache> {
  const dir = await mkdtemp(join(tmpdir(), "cms-nginx-"));
  const upstream = new URL(origin).host;
  const conf = `
${nginxInFolder(dir)}
  log_format cache '$upstream_cache_status $upstream_addr $status "$request"';
  access_log ${dir}/access.log cache;
  proxy_cache_path ${dir}/cache keys_zone=cms:10m;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://${upstream};
      proxy_cache cms;
    }
  }
}
`;
  const confPath = join(dir, "nginx.conf");
  await writeFile(confPath, conf);
  const child: ChildProcess = spawn(NGINX, ["-p", dir, "-c", confPath, "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  await nginxListening(port, child, dir, () => stderr).catch(async (err: unknown) => {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw err;
  });

  const log = async () => {
    const text = await readFile(join(dir, "access.log"), "utf8").catch(() => "");
    return text
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [cache = "", upstream = "", status = "0", ...rest] = line.split(" ");
        return { cache, upstream, status: Number(status), request: rest.join(" ") };
      });
  };
  return {
    baseUrl,
    url: (path) => `${baseUrl}${path}`,
    log,
    async originRequests(path) {
      return (await log()).filter((l) => l.upstream !== "-" && (path === undefined || l.request.includes(path))).length;
    },
    async close() {
      child.kill("SIGQUIT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** How long nginx may take to listen: it takes ≈ 10 ms; a machine loaded by the whole suite may stall it for seconds. */
const LISTEN_DEADLINE_MS = 30_000;

/**
 * Resolves once nginx accepts a TCP connection on `port` (its master has bound and listens).
 * Rejects as soon as it exits or reports the port taken (between the probe and its bind), or after
 * the deadline, with what nginx said on stderr and in `dir`'s error.log.
 */
export async function nginxListening(
  port: number,
  child: ChildProcess,
  dir: string,
  stderr: () => string,
): Promise<void> {
  const exited = new Promise<false>((resolve) => child.once("exit", () => resolve(false)));
  const started = performance.now();
  const failure = () => {
    if (child.exitCode !== null || child.signalCode !== null) return `exited (${child.signalCode ?? child.exitCode})`;
    // nginx tries its bind again for 2.5 s before exiting: meanwhile whoever holds the port would answer.
    if (/Address already in use/.test(stderr())) return "could not bind";
    return performance.now() - started >= LISTEN_DEADLINE_MS ? "did not listen" : null;
  };
  let failed = failure();
  while (!failed) {
    if (await Promise.race([accepts(port), exited])) return;
    failed = failure();
    if (!failed) await new Promise((r) => setTimeout(r, 50));
  }
  const log = await readFile(join(dir, "error.log"), "utf8").catch(() => "");
  const waited = Math.round(performance.now() - started);
  throw new Error(`nginx ${failed} on ${port} after ${waited} ms: ${`${stderr()}${log}`.trim()}`);
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
