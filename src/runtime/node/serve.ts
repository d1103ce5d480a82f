/** Node's `serve` for the shared start-up (host/bootstrap.ts): the app on a node:http server. */
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
  stopOnSignals(started, () => new Promise((resolve) => server.close(() => resolve())));
}
