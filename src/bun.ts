/**
 * Bun entry point: the same bootstrap as Node, served by Bun.serve (runtime/bun/server.ts says
 * what it answers itself and how it stands in for what node:http does on Node).
 */
import { fail, start } from "./runtime/host/bootstrap.js";
import { serveBun } from "./runtime/bun/server.js";

try {
  await start(process.env, "bun", serveBun);
} catch (err) {
  fail(err);
}
