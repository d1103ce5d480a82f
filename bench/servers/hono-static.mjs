// Reference: @hono/node-server's serveStatic on the same file (a framework's own static path).
// Serves STATIC_ROOT at /; GET /healthz answers 200. Listens on 127.0.0.1:$PORT.
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";

const app = new Hono();
app.get("/healthz", (c) => c.text("ok"));
app.use("/*", serveStatic({ root: process.env.STATIC_ROOT ?? "." }));
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: "127.0.0.1" });
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
