/**
 * Bun entry point: the same bootstrap as Node, served through Bun's own node:http. Not Bun.serve:
 * it drops a handler-set Content-Length on streamed bodies and sends them chunked
 * (oven-sh/bun#10507, still so in Bun 1.4.5), so getData would lose its Content-Length.
 */
import { serve } from "@hono/node-server";
import { bootstrap, fail, logListening, stopOnSignals } from "./runtime/bootstrap.js";

try {
  const started = await bootstrap(process.env);
  const { config } = started;
  const server = serve({ fetch: started.app.fetch, port: config.CMS_PORT, hostname: config.CMS_HOST }, (info) =>
    logListening(started, `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}`, "bun"),
  );
  server.on("error", (err: NodeJS.ErrnoException) => fail(new Error(`${config.CMS_HOST}:${config.CMS_PORT}: ${err.code ?? err.message}`)));
  stopOnSignals(started, () => new Promise((resolve) => server.close(() => resolve())));
} catch (err) {
  fail(err);
}
