/**
 * nginx as the reference static server (and as the loopback origin for ingest): own config in a temp
 * directory, 127.0.0.1 only, one worker (Node and Bun serve from one thread too; the other core is
 * wrk's), sendfile on (tcp_nopush left at its default, off: with it, 64 KiB range answers stall 40 ms on
 * delayed ACKs), no access log, keep-alive without a request cap (like Node's default).
 *
 * `accessLog`: one JSON line per request like the service's access log (time, level, msg, request id,
 * method, path, status, duration), buffered (64 KiB) and written to /dev/null as the bench writes
 * the service's stdout. It shows what the same log costs the reference.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type Server, startServer } from "./proc.js";
import { freePort } from "./util.js";

const ACCESS_LOG = `log_format cms escape=json '{"time":"$time_iso8601","level":"info","msg":"request","requestId":"$request_id","method":"$request_method","path":"$uri","status":$status,"durationMs":$request_time}';
  access_log /dev/null cms buffer=64k;`;

export async function startNginx(options: {
  name?: string;
  root: string;
  workDir: string;
  workers?: number;
  accessLog?: boolean;
}): Promise<Server> {
  const dir = path.join(options.workDir, `nginx-${options.name ?? "ref"}`);
  mkdirSync(path.join(dir, "tmp"), { recursive: true });
  const port = await freePort();
  const conf = path.join(dir, "nginx.conf");
  const isRoot = process.getuid?.() === 0;
  writeFileSync(
    conf,
    `${isRoot ? "user root;\n" : ""}worker_processes ${options.workers ?? 1};
daemon off;
master_process on;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  ${options.accessLog ? ACCESS_LOG : "access_log off;"}
  sendfile on;
  tcp_nodelay on;
  keepalive_timeout 65s;
  keepalive_requests 100000000;
  default_type application/octet-stream;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${options.root};
    location = /healthz { return 200 "ok"; }
  }
}
`,
  );
  return startServer({
    name: options.name ?? "nginx",
    command: "nginx",
    args: ["-p", dir, "-e", path.join(dir, "error.log"), "-c", conf],
    port,
    timeoutMs: 10_000,
  });
}
