// Reference: a bare Bun.serve server, no framework (Bun's own limit).
//   BARE_MODE=mem   FILE read once at start, every GET answered from memory
//   BARE_MODE=file  every GET answers Bun.file(FILE) (Bun sends files with sendfile); a single
//                   `Range: bytes=a-b` is answered 206 with Bun.file(FILE).slice (as the service does)
//   APP_HEAD        (JSON object) header fields added to every GET answer, with a fresh x-request-id
//                   each time: the service's own head (see bare-node.mjs)
// GET /healthz answers 200. Listens on 127.0.0.1:$PORT.
import { readFileSync, statSync } from "node:fs";

const mode = process.env.BARE_MODE ?? "mem";
const file = process.env.FILE ?? "";
const size = file ? statSync(file).size : 0;
const memory = mode === "mem" ? readFileSync(file) : null;
const appHead = process.env.APP_HEAD ? JSON.parse(process.env.APP_HEAD) : null;
const headers = { "content-type": "application/octet-stream", ...appHead };

/** Single `bytes=a-b` / `bytes=a-` / `bytes=-n` range, or null (serve everything). */
function parseRange(value) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(value ?? "");
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") return { start: Math.max(0, size - Number(m[2])), end: size - 1 };
  return { start: Number(m[1]), end: m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1) };
}

Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  fetch(req) {
    if (new URL(req.url).pathname === "/healthz") return new Response("ok");
    const head = appHead ? { ...headers, "x-request-id": crypto.randomUUID() } : headers;
    const range = memory ? null : parseRange(req.headers.get("range"));
    if (range) {
      const slice = Bun.file(file).slice(range.start, range.end + 1);
      return new Response(slice, { status: 206, headers: { ...head, "content-range": `bytes ${range.start}-${range.end}/${size}` } });
    }
    return new Response(memory ?? Bun.file(file), { headers: head });
  },
});
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
