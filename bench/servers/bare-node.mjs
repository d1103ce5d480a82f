// Reference: a bare node:http server, no framework. Plain JS (no loader), so it measures the runtime.
//   BARE_MODE=mem     FILE read once at start, every GET answered from memory (Range supported)
//   BARE_MODE=fs      every GET opens FILE and streams it with fs.createReadStream (Range supported)
//   BARE_MODE=ingest  POST {resourceExternalURI}: fetch → file (INGEST_DIR); INGEST_DURABLE=1 also
//                     hashes (SHA-256), fsyncs, renames into place and fsyncs the directory, the
//                     minimum of a crash-safe store (the fs blob store does this too); INGEST_DB=<file>
//                     then also commits one row per object to a SQLite WAL database durably
//                     (synchronous=NORMAL, then an fsync of the WAL shared by the commits waiting for
//                     it, as the service's durable commits do): the least a store that never loses an
//                     acknowledged record does, the floor under the service's ingest
//   APP_HEAD          (JSON object) header fields added to every GET answer, with a fresh
//                     x-request-id each time: the service's own head, copied from its answer by
//                     bench/scenarios/serving.ts, so the runtime's cost of sending those fields
//                     (the floor under the service) is measured rather than argued
// GET /healthz answers 200. Listens on 127.0.0.1:$PORT.
import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream, readFileSync, statSync } from "node:fs";
import { mkdir, open, rename } from "node:fs/promises";
import { createServer } from "node:http";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";

const mode = process.env.BARE_MODE ?? "mem";
const file = process.env.FILE ?? "";
const size = file ? statSync(file).size : 0;
const memory = mode === "mem" && file ? readFileSync(file) : null;
const appHead = process.env.APP_HEAD ? JSON.parse(process.env.APP_HEAD) : null;
const headers = { "content-type": "application/octet-stream", "accept-ranges": "bytes", ...appHead };

/** Single `bytes=a-b` / `bytes=a-` / `bytes=-n` range, or null (serve everything). */
function parseRange(value) {
  const m = /^bytes=(\d*)-(\d*)$/.exec(value ?? "");
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") return { start: Math.max(0, size - Number(m[2])), end: size - 1 };
  return { start: Number(m[1]), end: m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1) };
}

const rows = process.env.INGEST_DB ? await openRows(process.env.INGEST_DB) : null;

/** A durable row store: `commit(sha256, size)` resolves once the row is on disk. */
async function openRows(file) {
  const { default: Database } = await import("libsql");
  const db = new Database(file);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE IF NOT EXISTS objects (id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, size INTEGER NOT NULL, created INTEGER NOT NULL)");
  const insert = db.prepare("INSERT INTO objects VALUES (?, ?, ?, ?)");
  const wal = await open(`${file}-wal`, "r+");
  // Group commit: an fsync covers the commits made before it started; later ones share the next.
  let running = null;
  let queued = null;
  const sync = () => {
    if (!running) {
      running = wal.sync().finally(() => {
        running = null;
      });
      return running;
    }
    queued ??= running.then(() => {
      queued = null;
      return sync();
    });
    return queued;
  };
  return {
    commit(sha256, size) {
      insert.run(randomUUID(), sha256, size, Date.now());
      return sync();
    },
  };
}

async function ingest(req, res) {
  let json = "";
  for await (const chunk of req) json += chunk;
  const { resourceExternalURI } = JSON.parse(json);
  const origin = await fetch(resourceExternalURI);
  if (!origin.ok || !origin.body) throw new Error(`origin answered ${origin.status}`);
  const dir = process.env.INGEST_DIR;
  const temp = path.join(dir, `${randomUUID()}.part`);
  let bytes = 0;
  if (process.env.INGEST_DURABLE === "1") {
    const hash = createHash("sha256");
    const count = new Transform({
      transform(chunk, _enc, cb) {
        hash.update(chunk);
        bytes += chunk.length;
        cb(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(origin.body), count, createWriteStream(temp));
    const sha256 = hash.digest("hex");
    const handle = await open(temp, "r+");
    await handle.sync();
    await handle.close();
    const target = path.join(dir, sha256.slice(0, 2), sha256);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(temp, target);
    const parent = await open(path.dirname(target), "r");
    await parent.sync();
    await parent.close();
    await rows?.commit(sha256, bytes);
  } else {
    const count = new Transform({
      transform(chunk, _enc, cb) {
        bytes += chunk.length;
        cb(null, chunk);
      },
    });
    await pipeline(Readable.fromWeb(origin.body), count, createWriteStream(temp));
  }
  const body = JSON.stringify({ size: bytes });
  res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  if (req.url === "/healthz") {
    res.writeHead(200, { "content-type": "text/plain", "content-length": 2 });
    res.end("ok");
    return;
  }
  if (mode === "ingest") {
    ingest(req, res).catch((err) => {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
    return;
  }
  const range = parseRange(req.headers.range);
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  res.writeHead(range ? 206 : 200, {
    ...headers,
    ...(appHead ? { "x-request-id": randomUUID() } : {}),
    "content-length": end - start + 1,
    ...(range ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
  });
  if (memory) {
    res.end(range ? memory.subarray(start, end + 1) : memory);
    return;
  }
  const stream = createReadStream(file, { start, end });
  stream.on("error", () => res.destroy());
  stream.pipe(res);
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
process.once("SIGTERM", () => process.exit(0));
process.once("SIGINT", () => process.exit(0));
