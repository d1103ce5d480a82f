/**
 * nginx as a load balancer on 127.0.0.1 in front of several instances: round robin, no cache, large
 * bodies streamed both ways (uploads are not buffered to disk first, answers not held). Debian's
 * /usr/sbin/nginx in the foreground, its pid file, logs and temp files in `dir`. Used by
 * scripts/cluster.ts (`npm run cluster`); docs/scale-out.md shows the same configuration.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { NGINX, nginxInFolder, nginxListening } from "./nginx-cache.js";
import { freePort } from "./ports.js";

export interface NginxBalancer {
  /** http://127.0.0.1:<port> */
  url: string;
  child: ChildProcess;
  /** SIGQUIT (graceful), SIGKILL after 5 s; resolves once nginx has exited. */
  close(): Promise<void>;
}

/** The nginx.conf `http` block's load-balancing part: also what docs/scale-out.md shows. */
export const balancerConf = (port: number, upstreams: string[]) => `
  upstream cms {
${upstreams.map((u) => `    server ${new URL(u).host};`).join("\n")}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 0;
    location / {
      proxy_pass http://cms;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering off;
      proxy_buffering off;
    }
  }`;

export async function startNginxBalancer(dir: string, upstreams: string[]): Promise<NginxBalancer> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const conf = `${nginxInFolder(dir)}
  access_log ${dir}/access.log;
${balancerConf(port, upstreams)}
}
`;
  const confPath = join(dir, "nginx.conf");
  await writeFile(confPath, conf);
  const child = spawn(NGINX, ["-p", dir, "-c", confPath, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await nginxListening(port, child, dir, () => stderr);
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGQUIT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
