/** Node entry point: bootstrap, then serve the app with @hono/node-server (in CMS_WORKERS processes). */
import "./runtime/node/v8-flags.js";
import "./runtime/node/tick-maps.js";
import { fail, start } from "./runtime/host/bootstrap.js";
import { serveNode } from "./runtime/node/serve.js";

try {
  await start(process.env, "node", serveNode);
} catch (err) {
  fail(err);
}
