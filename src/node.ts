/** Node entry point: bootstrap, then serve the app with @hono/node-server (in CMS_WORKERS processes). */
import { fail, start } from "./runtime/node/bootstrap.js";

try {
  await start(process.env, "node");
} catch (err) {
  fail(err);
}
