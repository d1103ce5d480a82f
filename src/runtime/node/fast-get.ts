/**
 * The hottest request, answered on node:http before Hono: an anonymous GET or HEAD of getData
 * whose blob is in the small-blob cache. It gives the answer the Hono route gives — the same
 * lookup (`resources.findByUri`), the same RFC 9110 decision (`answerBlob`), the same CORS headers
 * and request id (the access-log line is written around it, by access-log.ts) — without building a Web Request, Headers and Response around
 * 4 KiB of bytes (bench, 4 KiB getData: 7.4k → 11k req/s; bench/NOTES.md).
 *
 * It only ever answers 200, single-range 206 and 304. Everything else is handed to the app
 * untouched: tokens (when reads need one), signed links and any query string, percent-encoded
 * paths, multipart ranges, 412/416, unknown or deleted resources, blobs not in memory, and any
 * error. Node and Bun (node:http) only; Workers serve everything through the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { ANONYMOUS_PRINCIPAL } from "../../auth/principal.js";
import { answerBlob } from "../../http/answer-blob.js";
import type { Logger } from "../../lib/logger.js";
import { API_CORS, corsResponseHeaders } from "../../http/middleware/cors.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";
import { API_PREFIX } from "../../routes/meta.js";
import type { ResourceRow } from "../../metadata/schema.js";
import { parseUri } from "../../services/resource-ids.js";
import type { Services } from "../../services/index.js";

const PREFIX = `${API_PREFIX}/getData/`;
const CORS_HEADERS = corsResponseHeaders(API_CORS);

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

  /** Everything `row`'s answer needs, or null when the app must give it. Writes nothing. */
  function prepare(req: IncomingMessage, row: ResourceRow) {
    const bytes = content.inMemory(row);
    if (!bytes) return null;
    const result = answerBlob(req.method as string, (name) => req.headers[name] as string | undefined, content.serve(row, req.headers.host).entity);
    if (result.multipart) return null;
    const send = req.method === "GET" && result.status !== 304;
    const body = send ? (result.range ? bytes.subarray(result.range.start, result.range.end + 1) : bytes) : undefined;
    const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
    return { ...result, body, requestId };
  }

  function send(req: IncomingMessage, res: ServerResponse, row: ResourceRow) {
    let answer: ReturnType<typeof prepare>;
    try {
      answer = prepare(req, row);
      // Validates every header before anything is sent, so a throw here leaves `res` untouched.
      if (answer) res.writeHead(answer.status, { ...answer.headers, ...CORS_HEADERS, "x-request-id": answer.requestId });
    } catch {
      answer = null; // 412, 416…: the app answers it, with its problem details
    }
    if (!answer) return next(req, res);
    res.end(answer.body);
  }

  return (req, res) => {
    const { method, url } = req;
    // Only plain paths: Hono decodes %-escapes and the guards read the query (signed links).
    const uri =
      anonymousRead && (method === "GET" || method === "HEAD") && url?.startsWith(PREFIX) && !url.includes("%") && !url.includes("?")
        ? parseUri(url.slice(PREFIX.length))
        : null;
    if (!uri) return next(req, res);
    resources
      .findByUri(uri.context, uri.path, ANONYMOUS_PRINCIPAL)
      .then(
        (row) => send(req, res, row),
        // Not found, deleted, another tenant's: the app answers it, with its problem details.
        () => next(req, res),
      )
      .catch((err: unknown) => {
        // A bug, not bad input: never an unhandled rejection (it would stop the process).
        logger.error("unhandled error", { err, path: url });
        res.destroy();
      });
  };
}
