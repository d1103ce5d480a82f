/** Node entry point: bootstrap, then serve the app with @hono/node-server. */
import { serve } from "@hono/node-server";
import { bootstrap, fail, logListening, stopOnSignals } from "./runtime/bootstrap.js";

try {
  const started = await bootstrap(process.env);
  const { config } = started;
  const server = serve({ fetch: started.app.fetch, port: config.CMS_PORT, hostname: config.CMS_HOST }, (info) =>
    logListening(started, `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}`, "node"),
  );
  server.on("error", (err: NodeJS.ErrnoException) => fail(new Error(`${config.CMS_HOST}:${config.CMS_PORT}: ${err.code ?? err.message}`)));
  stopOnSignals(started, () => new Promise((resolve) => server.close(() => resolve())));
} catch (err) {
  fail(err);
}
