/** Node's `serve` for the shared start-up (host/bootstrap.ts): the app on a node:http server. */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Bootstrapped, fail, logListening, stopOnSignals, warmImages } from "../host/bootstrap.js";
import { createNodeServer } from "./server.js";

/** Serves the app through node:http (Node's, or Bun's own), logs "listening" and stops on signals. */
export function serveNode(started: Bootstrapped, runtime: string) {
  const { config } = started;
  const server = createNodeServer(started);
  server.on("error", (err: NodeJS.ErrnoException) =>
    fail(new Error(`${config.CMS_HOST}:${config.CMS_PORT}: ${err.code ?? err.message}`)),
  );
  server.listen(config.CMS_PORT, config.CMS_HOST, () => {
    const info = server.address() as AddressInfo;
    logListening(
      started,
      `http://${info.family === "IPv6" ? `[${info.address}]` : info.address}:${info.port}`,
      runtime,
    );
    warmImages(started);
  });
  stopOnSignals(started, () => closeServer(server));
}

/** How often a stopping server looks for connections whose last answer is over. */
const CLOSE_SWEEP_MS = 50;

/**
 * Stops accepting; resolves once every connection is gone. node:http answers the requests in flight
 * keep-alive and leaves their connections open until keepAliveTimeout (65 s), so each is closed as
 * soon as its answer is over: polled only while stopping, nothing added to a request's path.
 */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), CLOSE_SWEEP_MS);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
  });
}
