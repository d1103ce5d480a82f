/**
 * The hottest requests, answered on node:http before Hono: an anonymous or signed-link GET or HEAD
 * of getData (which ones: delivery/runtime-reads.ts, delivery/query.ts, delivery/signed-read.ts).
 * A thin sender: the same lookup as the
 * route (`resources.findByUri`), the delivery core's answer (delivery/core.ts `now`) with the
 * request id (the access-log line is written around it, by access-log.ts), sent without building
 * a Web Request, Headers, Response and body stream: a blob in the small-blob cache from memory
 * (bench, 4 KiB getData: 7.4k → 11k req/s), any other blob of the fs driver straight from its open
 * file (send-file.ts; random 64 KiB ranges went from 0.36–0.41× to ≈ 1.0× of a bare node:http
 * range stream, bench large-files).
 *
 * A query of image parameters only is answered here when its derivative is stored already: issue
 * 30's cached derivative as fast as plain getData. So is a versioned URL of the current content
 * (`?v=`). The core decides both; a row left to the app goes with its parsed query. So is a valid
 * signed link, with auth on or off (delivery/signed-read.ts), under the link's Cache-Control.
 *
 * It only ever sends 200, single-range 206 and 304. Everything else is handed to the app
 * untouched: tokens (when reads need one), a link it cannot verify, any other query string, percent-encoded
 * paths, multipart ranges, 412/416, unknown or deleted resources, blobs neither in memory nor in
 * local files (S3), a blob file that is missing or of the wrong size, and any error before the
 * head is written. A row found here goes to the app with the request (delivery/handed-over-row.ts):
 * one lookup. Node only; Bun has its own sender (runtime/bun/fast-get.ts), Workers use the app's.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { ANONYMOUS_PRINCIPAL } from "../../auth/principal.js";
import type { ResponseHeaders } from "../../http/answer-blob.js";
import { type Delivered, deliveryCore } from "../../delivery/core.js";
import { handOverRow } from "../../delivery/handed-over-row.js";
import type { DeliveryQuery } from "../../delivery/query.js";
import { type FastReads, fastReadQuery, runtimeRead } from "../../delivery/runtime-reads.js";
import type { SignedLinks } from "../../delivery/signed-read.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";
import type { Logger } from "../../lib/logger.js";
import type { ResourceRow } from "../../metadata/schema.js";
import type { Services } from "../../services/index.js";
import { sendFile } from "./send-file.js";

export interface FastGetDeps {
  services: Pick<Services, "resources" | "content"> & Partial<Pick<Services, "images">>;
  logger: Logger;
  /** `readsAreOpen` (auth/guards.ts): reads need no credentials. Otherwise only signed links are answered here. */
  anonymousRead: boolean;
  /** The app's link signer and clock: valid signed links are answered here too (delivery/signed-read.ts). */
  signedLinks?: SignedLinks;
}

/**
 * A shared head (the row's plain head) as [name, value, …, "x-request-id", <id>]: node:http writes an
 * array without looking at each key's case. One array per head, its last slot set per answer:
 * writeHead reads the array while it runs and keeps no reference (it builds the head's text), so
 * the caller must write the head in the same call that asks for it, with no await in between. A
 * copy and a grown copy per request (slice, push) were what b72fcdc did.
 */
const flatHeads = new WeakMap<ResponseHeaders, string[]>();
function flatHead(head: ResponseHeaders): string[] {
  let flat = flatHeads.get(head);
  if (!flat) {
    flat = [...Object.entries(head).flat(), "x-request-id", ""];
    flatHeads.set(head, flat);
  }
  return flat;
}

/** A shared head with a derivative's fields over it (its Vary), flat as above: built once per head and policy. */
const flatOverlays = new WeakMap<ResponseHeaders, WeakMap<ResponseHeaders, string[]>>();
function flatOverlay(head: ResponseHeaders, policy: ResponseHeaders): string[] {
  let byPolicy = flatOverlays.get(head);
  if (!byPolicy) flatOverlays.set(head, (byPolicy = new WeakMap()));
  let flat = byPolicy.get(policy);
  if (!flat) {
    flat = [...Object.entries({ ...head, ...policy }).flat(), "x-request-id", ""];
    byPolicy.set(policy, flat);
  }
  return flat;
}

/** The head of a sent answer for node:http's writeHead, with its policy's fields and the request id. */
function nodeHead(answer: Delivered, requestId: string) {
  const { head, shared, fields, policy } = answer;
  if (!shared) {
    if (policy) Object.assign(head, policy);
    head["x-request-id"] = requestId; // a fresh head belongs to this answer
    return head;
  }
  const flat = policy ? flatOverlay(head, policy) : flatHead(head);
  if (!fields) {
    flat[flat.length - 1] = requestId;
    return flat;
  }
  // A plain range's framing changes the fields: its own copy, new fields after the shared ones and
  // the id last. Pushed, not spliced in, and read with for…in (no entries array): Array.prototype.splice
  // and Object.entries were ≈ 1 300 of the 11 500 instructions a 64 KiB range costs over b72fcdc's.
  const end = flat.length - 2; // the request id's name
  const headers = flat.slice(0, end);
  for (const name in fields) {
    const value = fields[name] as string;
    let at = 0;
    while (at < end && headers[at] !== name) at += 2;
    if (at < end) headers[at + 1] = value;
    else headers.push(name, value);
  }
  headers.push(flat[end] as string, requestId);
  return headers;
}

/**
 * A cached blob's bytes as a Buffer, made once per blob (the cache's entries are never changed in
 * place): node:http turns any other Uint8Array into a Buffer on every write (FastBuffer,
 * `_uint8ArrayToBuffer`), and a whole body is sent as it is, without a subarray per request.
 */
const bufferViews = new WeakMap<Uint8Array, Buffer>();
function bodyBytes(bytes: Uint8Array, start: number, length: number): Buffer {
  let buffer = Buffer.isBuffer(bytes) ? bytes : bufferViews.get(bytes);
  if (!buffer) {
    buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    bufferViews.set(bytes, buffer);
  }
  return start === 0 && length === buffer.byteLength ? buffer : buffer.subarray(start, start + length);
}

/**
 * A node:http listener that answers what it can and hands everything else to `next` (the app)
 * with `req` and `res` untouched: an answer is prepared whole before anything is written.
 */
export function withFastGet(
  { services, logger, anonymousRead, signedLinks }: FastGetDeps,
  next: RequestListener,
): RequestListener {
  const { resources, content, images } = services;
  const core = deliveryCore({ content, images });
  const reads: FastReads = { anonymousRead, images, signedLinks, cache: content.cache };

  /** The app answers, with the row found here and its parsed query (neither is done twice: S3's large blobs always come this way). */
  function toApp(req: IncomingMessage, res: ServerResponse, row: ResourceRow, query: DeliveryQuery) {
    handOverRow(req, row, query);
    return next(req, res);
  }

  /**
   * The core's answer for `row` and `query`, sent; else the app's. Decided in this call unless a
   * derivative this process does not know to be stored must be looked for. Synchronous for an
   * answer from memory (HEAD, 304, a cached blob): no async function, promise or `.catch` per
   * request on the hottest path (bench/NOTES.md, eighth pass); a promise only when there is more
   * to wait for. A throw or a rejection is the caller's (`failed`).
   */
  function send(req: IncomingMessage, res: ServerResponse, row: ResourceRow, query: DeliveryQuery) {
    const header = (name: string) => req.headers[name] as string | undefined;
    const now = core.now(row, query, req.method as string, header, req.headers.host);
    return now instanceof Promise
      ? now.then((answer) => sendAnswer(req, res, row, query, answer))
      : sendAnswer(req, res, row, query, now);
  }

  function sendAnswer(
    req: IncomingMessage,
    res: ServerResponse,
    row: ResourceRow,
    query: DeliveryQuery,
    answer: Delivered | null | undefined,
  ): unknown {
    if (!answer) return toApp(req, res, row, query);
    const { status, body, facts } = answer;
    const requestId = requestIdFrom(req.headers["x-request-id"] as string | undefined);
    const start = body ? body.start : 0;
    const length = body ? body.end - body.start + 1 : 0;
    // Nothing to send (HEAD, 304, an empty blob): storage isn't touched, as in the app.
    const bytes = length > 0 ? content.inMemory(facts) : undefined;
    if (length === 0 || bytes) {
      // Validates every header before anything is sent, so a throw leaves `res` to the app.
      if (!writeHead(res, status, nodeHead(answer, requestId))) return toApp(req, res, row, query);
      return void res.end(bytes && bodyBytes(bytes, start, length));
    }
    return sendFromFile(req, res, row, query, answer, requestId, start, length);
  }

  /** A blob not in memory: from its local file, or the app's answer. */
  async function sendFromFile(
    req: IncomingMessage,
    res: ServerResponse,
    row: ResourceRow,
    query: DeliveryQuery,
    answer: Delivered,
    requestId: string,
    start: number,
    length: number,
  ) {
    const { status, facts } = answer;
    // A storage fault before the head: the app answers it (as a problem), so the answers stay the same.
    const file = await content.openFile(facts)?.catch(() => null);
    // No local files (S3), a missing blob, or a file that does not hold what the row says: the app's answer.
    if (!file || file.size !== facts.size) {
      file?.release();
      // A derivative remembered as stored that another instance evicted: the app makes it again.
      if (query.image) images?.missing(facts);
      return toApp(req, res, row, query);
    }
    // The head only now: a shared head's id slot is set in the call that writes it (nodeHead).
    if (!writeHead(res, status, nodeHead(answer, requestId))) {
      file.release();
      return toApp(req, res, row, query);
    }
    await sendFile(res, file, start, length);
  }

  return (req, res) => {
    const { method, url } = req;
    if (!anonymousRead && !signedLinks) return next(req, res);
    const uri = runtimeRead(method, url);
    if (!uri) return next(req, res);
    const query = fastReadQuery(reads, uri);
    if (!query) return next(req, res);
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
    if (row) {
      try {
        settle(send(req, res, row, query), failed);
      } catch (err) {
        failed(err);
      }
      return;
    }
    resources
      .findByUri(uri.context, uri.path, ANONYMOUS_PRINCIPAL)
      .then(
        (found) => send(req, res, found, query),
        () => next(req, res),
      )
      .catch(failed);
  };
}

/** A rejection of what `send` returned (a promise when it had to wait) goes to `failed`. */
function settle(sent: unknown, failed: (err: unknown) => void): void {
  if (sent instanceof Promise) sent.catch(failed);
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
