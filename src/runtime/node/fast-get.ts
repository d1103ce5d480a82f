/**
 * The hottest requests, answered on node:http before Hono: an anonymous GET or HEAD of getData. It
 * gives the answer the Hono route gives — the same lookup (`resources.findByUri`), the same RFC 9110
 * decision (`answerBlob`), the same CORS headers and request id (the access-log line is written
 * around it, by access-log.ts) — without building a Web Request, Headers, Response and body stream:
 * a blob in the small-blob cache is sent from memory (bench, 4 KiB getData: 7.4k → 11k req/s), any
 * other blob of the fs driver straight from its open file (send-file.ts; random 64 KiB ranges went
 * from 0.36–0.41× to ≈ 1.0× of a bare node:http range stream, bench large-files).
 *
 * It only ever answers 200, single-range 206 and 304. Everything else is handed to the app
 * untouched: tokens (when reads need one), signed links and any query string, percent-encoded
 * paths, multipart ranges, 412/416, unknown or deleted resources, blobs neither in memory nor in
 * local files (S3), a blob file that is missing or of the wrong size, and any error before the
 * head is written. A row found here goes to the app with the request (http/handed-over-row.ts): one lookup. Node and Bun (node:http) only; Workers serve everything through the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { ANONYMOUS_PRINCIPAL } from "../../auth/principal.js";
import { answerBlob } from "../../http/answer-blob.js";
import { contentEntities } from "../../http/content-entity.js";
import { handOverRow } from "../../http/handed-over-row.js";
import type { Logger } from "../../lib/logger.js";
import { CONTENT_CORS_HEADERS } from "../../http/middleware/cors.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";
import { isPlainRequest, plainHeads, plainRange } from "../../http/plain-heads.js";
import { contentRange } from "../../http/range.js";
import { API_PREFIX } from "../../routes/meta.js";
import type { ResourceRow } from "../../metadata/schema.js";
import { parseUri } from "../../services/resource-ids.js";
import type { Services } from "../../services/index.js";
import { sendFile } from "./send-file.js";

const PREFIX = `${API_PREFIX}/getData/`;
const NO_FIELD = () => undefined;

export interface FastGetDeps {
  services: Pick<Services, "resources" | "content">;
  logger: Logger;
  /** `readsAreOpen` (auth/guards.ts): reads need no credentials. Otherwise nothing is answered here. */
  anonymousRead: boolean;
}

/**
 * A node:http listener that answers what it can and hands everything else to `next` (the app)
 * with `req` and `res` untouched: an answer is prepared whole before anything is written.
 */
export function withFastGet({ services, logger, anonymousRead }: FastGetDeps, next: RequestListener): RequestListener {
  const { resources, content } = services;
  const entities = contentEntities(content);

  /** A plain GET's head for `row` as [name, value, …] without the request id, in the order `decide` gives. */
  const plainHead = plainHeads((row: ResourceRow, host: string | undefined) => {
    const { headers } = answerBlob("GET", NO_FIELD, entities.serve(row, host).entity);
    return [...Object.entries(headers), ...Object.entries(CONTENT_CORS_HEADERS)].flat();
  });

  /** The head of `row`'s answer, or null when the app must give it. Writes nothing. */
  function decide(req: IncomingMessage, row: ResourceRow) {
    const header = (name: string) => req.headers[name] as string | undefined;
    const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
    const sent = req.method === "GET";
    if (isPlainRequest(header)) {
      const headers = plainHead(row, req.headers.host).slice();
      headers.push("x-request-id", requestId);
      return { status: 200, headers, start: 0, length: sent ? row.size : 0 };
    }
    const range = sent ? plainRange(header, row.size) : null;
    if (range) {
      const headers = plainHead(row, req.headers.host).slice();
      const length = range.end - range.start + 1;
      headers[headers.indexOf("content-length") + 1] = String(length); // the plain head always has it: a 200's framing
      headers.push("content-range", contentRange(range, row.size), "x-request-id", requestId);
      return { status: 206, headers, start: range.start, length };
    }
    const result = answerBlob(req.method as string, header, entities.serve(row, req.headers.host).entity);
    if (result.multipart) return null;
    const headers = { ...result.headers, ...CONTENT_CORS_HEADERS, "x-request-id": requestId };
    const start = result.range?.start ?? 0;
    const length = sent && result.status !== 304 ? (result.range ? result.range.end - start + 1 : row.size) : 0;
    return { status: result.status, headers, start, length };
  }

  /** The app answers, with the row found here (it is not looked up twice: S3's large blobs always come this way). */
  function toApp(req: IncomingMessage, res: ServerResponse, row: ResourceRow) {
    handOverRow(req, row);
    return next(req, res);
  }

  async function send(req: IncomingMessage, res: ServerResponse, row: ResourceRow) {
    let answer: ReturnType<typeof decide>;
    try {
      answer = decide(req, row);
    } catch {
      answer = null; // 412, 416…: the app answers it, with its problem details
    }
    if (!answer) return toApp(req, res, row);
    const { status, headers, start, length } = answer;
    // Nothing to send (HEAD, 304, an empty blob): storage isn't touched, as in the app.
    const bytes = length > 0 ? content.inMemory(row) : undefined;
    if (length === 0 || bytes) {
      // Validates every header before anything is sent, so a throw leaves `res` to the app.
      if (!writeHead(res, status, headers)) return toApp(req, res, row);
      return void res.end(bytes?.subarray(start, start + length));
    }
    // A storage fault before the head: the app answers it (as a problem), so the answers stay the same.
    const file = await content.openFile(row)?.catch(() => null);
    // No local files (S3), a missing blob, or a file that does not hold what the row says: the app's answer.
    if (!file || file.size !== row.size) {
      file?.release();
      return toApp(req, res, row);
    }
    if (!writeHead(res, status, headers)) {
      file.release();
      return toApp(req, res, row);
    }
    await sendFile(res, file, start, length);
  }

  return (req, res) => {
    const { method, url } = req;
    // Only plain paths: Hono decodes %-escapes and the guards read the query (signed links).
    const uri =
      anonymousRead &&
      (method === "GET" || method === "HEAD") &&
      url?.startsWith(PREFIX) &&
      !url.includes("%") &&
      !url.includes("?")
        ? parseUri(url.slice(PREFIX.length))
        : null;
    if (!uri) return next(req, res);
    // A storage fault or a bug, not bad input: never an unhandled rejection (it would stop the
    // process). Before the head the app could still answer; after it, only closing is honest.
    const failed = (err: unknown) => {
      logger.error("unhandled error", { err, path: url });
      res.destroy();
    };
    let row: ResourceRow | undefined;
    try {
      // With the synchronous lookup (the prepared read connection) a cached blob is sent in this call.
      row = resources.findByUriNow(uri.context, uri.path, ANONYMOUS_PRINCIPAL);
    } catch {
      return next(req, res); // not found, deleted, another tenant's: the app answers it, with its problem details
    }
    if (row) return void send(req, res, row).catch(failed);
    resources
      .findByUri(uri.context, uri.path, ANONYMOUS_PRINCIPAL)
      .then(
        (found) => send(req, res, found),
        () => next(req, res),
      )
      .catch(failed);
  };
}

/** res.writeHead, or false (with `res` untouched) when a header value is not valid. */
function writeHead(res: ServerResponse, status: number, headers: Record<string, string> | string[]): boolean {
  try {
    res.writeHead(status, headers);
    return true;
  } catch {
    return false;
  }
}
