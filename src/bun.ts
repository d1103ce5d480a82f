/** Bun entry point: the same bootstrap as Node, served by Bun.serve. */
import { bootstrap, fail, logListening, stopOnSignals } from "./runtime/bootstrap.js";

interface BunServer {
  hostname: string;
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
declare const Bun: {
  serve(options: { fetch: (request: Request) => Response | Promise<Response>; port: number; hostname: string; maxRequestBodySize?: number }): BunServer;
};

try {
  const started = await bootstrap(process.env);
  const { config } = started;
  const server = Bun.serve({ fetch: started.app.fetch, port: config.CMS_PORT, hostname: config.CMS_HOST });
  logListening(started, `http://${server.hostname.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`, "bun");
  stopOnSignals(started, () => server.stop());
} catch (err) {
  fail(err);
}
