/** Node entry point: bootstrap, then serve the app with @hono/node-server. */
import { bootstrap, fail, serveNode } from "./runtime/node/bootstrap.js";

try {
  serveNode(await bootstrap(process.env), "node");
} catch (err) {
  fail(err);
}
