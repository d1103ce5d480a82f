/**
 * Bun entry point: the same bootstrap as Node, served through Bun's own node:http. Not Bun.serve:
 * it drops a handler-set Content-Length on streamed bodies and sends them chunked
 * (oven-sh/bun#10507, still so in Bun 1.4.5), so getData would lose its Content-Length.
 */
import { fail, start } from "./runtime/node/bootstrap.js";

try {
  await start(process.env, "bun");
} catch (err) {
  fail(err);
}
