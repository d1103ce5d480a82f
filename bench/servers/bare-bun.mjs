// Reference: a bare Bun.serve server, no framework (Bun's own limit).
//   BARE_MODE=mem   FILE read once at start, every GET answered from memory
//   BARE_MODE=file  every GET answers Bun.file(FILE) (Bun sends files with sendfile)
// GET /healthz answers 200. Listens on 127.0.0.1:$PORT.
import { readFileSync } from "node:fs";

const mode = process.env.BARE_MODE ?? "mem";
const file = process.env.FILE ?? "";
const memory = mode === "mem" ? readFileSync(file) : null;
const headers = { "content-type": "application/octet-stream" };

Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  fetch(req) {
    if (new URL(req.url).pathname === "/healthz") return new Response("ok");
    return new Response(memory ?? Bun.file(file), { headers });
  },
});
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
