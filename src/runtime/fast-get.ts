/**
 * The hottest request, answered on node:http before Hono: an anonymous GET or HEAD of getData
 * whose blob is in the small-blob cache. It gives the answer the Hono route gives — the same
 * lookup (`resources.findByUri`), the same RFC 9110 decision (`answerBlob`), the same CORS headers,
 * request id and access-log line — without building a Web Request, Headers and Response around
 * 4 KiB of bytes, which cost ~5× the work of the answer itself (bench/NOTES.md, scenario 1).
 *
 * It only ever answers 200, single-range 206 and 304. Everything else is handed to the app
 * untouched: tokens (when reads need one), signed links and any query string, percent-encoded
 * paths, multipart ranges, 412/416, unknown or deleted resources, blobs not in memory, and any
 * error. Node and Bun (node:http) only; Workers serve everything through the app.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { ANONYMOUS_PRINCIPAL } from "../auth/principal.js";
import { answerBlob } from "../lib/serve-blob.js";
import type { Logger } from "../lib/logger.js";
import { API_CORS, corsResponseHeaders } from "../middleware/cors.js";
import { logAccess, requestIdFrom } from "../middleware/request-context.js";
import { API_PREFIX } from "../routes/meta.js";
import { parseUri } from "../services/resource-ids.js";
import type { Services } from "../services/index.js";

const PREFIX = `${API_PREFIX}/getData/`;
const CORS_HEADERS = corsResponseHeaders(API_CORS);

export interface FastGetDeps {
  services: Pick<Services, "resources" | "content">;
  logger: Logger;
  /** True when reads need no credentials (auth off, or CMS_PUBLIC_READ). Otherwise nothing is answered here. */
  anonymousRead: boolean;
}

/** Answers the request and resolves true, or resolves false having touched neither `req` nor `res`. */
export type FastGet = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

export function createFastGet({ services, logger, anonymousRead }: FastGetDeps): FastGet {
  const { resources, content } = services;
  return async (req, res) => {
    const started = performance.now();
    const { method, url } = req;
    if (!anonymousRead || (method !== "GET" && method !== "HEAD") || !url?.startsWith(PREFIX)) return false;
    // Only plain paths: Hono decodes %-escapes and the guards read the query (signed links).
    if (url.includes("%") || url.includes("?")) return false;
    const uri = parseUri(url.slice(PREFIX.length));
    if (!uri) return false;
    try {
      const row = await resources.findByUri(uri.context, uri.path, ANONYMOUS_PRINCIPAL);
      const bytes = content.inMemory(row);
      if (!bytes) return false;
      const { entity } = content.serve(row);
      const answer = answerBlob(method, (name) => req.headers[name] as string | undefined, entity);
      if (answer.multipart) return false;
      const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
      res.writeHead(answer.status, { ...answer.headers, ...CORS_HEADERS, "x-request-id": requestId });
      const send = method === "GET" && answer.status !== 304;
      res.end(send ? (answer.range ? bytes.subarray(answer.range.start, answer.range.end + 1) : bytes) : undefined);
      logAccess(logger, { requestId, method, path: url, status: answer.status, started, length: answer.headers["content-length"] });
      return true;
    } catch {
      // Not found, deleted, another tenant's, 412, 416…: the app answers it, with its problem details.
      return false;
    }
  };
}

/** A node:http listener that tries `fastGet` first and otherwise hands the request to `next`. */
export function withFastGet(fastGet: FastGet, next: RequestListener): RequestListener {
  return (req, res) => {
    void fastGet(req, res).then(
      (answered) => answered || next(req, res),
      () => next(req, res),
    );
  };
}
