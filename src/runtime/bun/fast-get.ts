/**
 * getData's anonymous or signed-link GET/HEAD answered on Bun.serve before Hono (which ones:
 * delivery/runtime-reads.ts, delivery/query.ts, delivery/signed-read.ts). A thin sender, as runtime/node/fast-get.ts is on
 * node:http: the same lookup as the route (`resources.findByUri`) and the delivery core's answer
 * (delivery/core.ts `now`) with the request id. The body is the cached bytes when the
 * small-blob cache holds them, otherwise a slice of the blob's file (`ContentService.localFile`,
 * `Bun.file(path).slice`: a sized body Bun sends with sendfile), so ranges of large files never
 * build a Web stream.
 *
 * It only ever sends 200, single-range 206 and 304; `null` hands the request to the app
 * untouched: tokens (when reads need one), a signed link it cannot verify in the call, and any
 * query string but a valid link's, image parameters whose derivative is stored and a `v` naming the
 * current content (the core decides both; a row
 * left to the app goes with its parsed query), percent-encoded
 * paths, multipart ranges, 412/416, unknown or deleted resources, a blob with no local file of the
 * row's size, small blobs not yet cached (the app's read fills the cache), and any error.
 */
import { ANONYMOUS_PRINCIPAL } from "../../auth/principal.js";
import type { ResponseHeaders } from "../../http/answer-blob.js";
import { type Delivered, deliveryCore } from "../../delivery/core.js";
import { handOverRow } from "../../delivery/handed-over-row.js";
import type { DeliveryQuery } from "../../delivery/query.js";
import { type FastReads, fastReadQuery, runtimeRead } from "../../delivery/runtime-reads.js";
import type { SignedLinks } from "../../delivery/signed-read.js";
import type { ResourceRow } from "../../metadata/schema.js";
import type { ContentFacts } from "../../metadata/content-facts.js";
import type { Services } from "../../services/index.js";
import type { ProblemError } from "../../problems.js";
import type { LocalBlobFile } from "../../storage/blob-store.js";
import { bunApi } from "./bun-api.js";

const EMPTY = new Uint8Array(0);
const KNOWN_FILES = 4096;

export interface BunFastGetDeps {
  services: Pick<Services, "resources" | "content"> & Partial<Pick<Services, "images">>;
  /** `readsAreOpen` (auth/guards.ts): reads need no credentials. Otherwise only signed links are answered here. */
  anonymousRead: boolean;
  /** The app's link signer and clock: valid signed links are answered here too (delivery/signed-read.ts). */
  signedLinks?: SignedLinks;
  /** Blobs up to this size go to the app until the small-blob cache holds them (0: no cache). */
  cachedUpTo: number;
}

/** The request target (path and query) of a request URL (`http://host/path?query`). */
const targetOf = (url: string) => url.slice(url.indexOf("/", url.indexOf("//") + 2));

/**
 * A shared head (the row's plain head) as a Headers object: Bun copies a Headers object natively (a
 * 4 KiB answer with it: 1.2–1.4 µs, with an object spread of the same fields 2.7–3.2 µs, in a loop).
 */
const headersOfHead = new WeakMap<ResponseHeaders, Headers>();
function headersOf(head: ResponseHeaders): Headers {
  let known = headersOfHead.get(head);
  if (!known) {
    known = new Headers(head);
    headersOfHead.set(head, known);
  }
  return known;
}

/**
 * The Response of a sent answer, its head with its policy's fields and the request id. A shared head
 * goes to the constructor as it is, and the answer's own fields are set on the Response's copy:
 * the constructor copies whatever Headers it is given, so a copy made first was copied twice (a
 * 4 KiB answer in a loop: 0.63–0.67 µs with a copy first, 0.47–0.48 without; bench/NOTES.md,
 * twelfth pass).
 */
function bunResponse(body: BodyInit | null, answer: Delivered, requestId: string): Response {
  const { status, head, shared, fields, policy } = answer;
  if (!shared) {
    if (policy) Object.assign(head, policy);
    head["x-request-id"] = requestId; // a fresh head belongs to this answer
    return new Response(body, { status, headers: head });
  }
  const res = new Response(body, { status, headers: headersOf(head) });
  const { headers } = res;
  if (fields) for (const [name, value] of Object.entries(fields)) headers.set(name, value);
  if (policy) for (const [name, value] of Object.entries(policy)) headers.set(name, value);
  headers.set("x-request-id", requestId);
  return res;
}

/** Returns a handler giving the fast answer with `requestId`, or null when the app must answer. */
export function bunFastGet({ services, anonymousRead, signedLinks, cachedUpTo }: BunFastGetDeps) {
  const { resources, content, images } = services;
  const core = deliveryCore({ content, images });
  const reads: FastReads = { anonymousRead, images, signedLinks, cache: content.cache };
  // Blob files by blob key: a content-addressed file never changes, so one stat serves every later
  // read of it (a stat per request was 7–9 % of the CPU of random range GETs; one per file took the
  // profiled server from 5.5k to 10.0k req/s). Bounded: cleared when full.
  const files = new Map<string, LocalBlobFile>();
  const knownFile = (row: ContentFacts) => {
    const known = files.get(row.blobKey);
    return known && known.size === row.size ? known : undefined;
  };
  async function localFile(row: ContentFacts): Promise<LocalBlobFile | null> {
    const file = await content.localFile(row);
    if (file) {
      if (files.size >= KNOWN_FILES) files.clear();
      files.set(row.blobKey, file);
    }
    return file;
  }

  /** The core's answer as a Response: in the same call when nothing needs reading (bytes cached, HEAD, 304, empty). */
  function respond(
    decided: Delivered,
    requestId: string,
    derived: boolean,
  ): Response | null | Promise<Response | null> {
    const { body, facts: row } = decided;
    const bytes = content.inMemory(row);
    if (!bytes && row.size <= cachedUpTo) return null;
    if (!body) return bunResponse(null, decided, requestId);
    const { start, end } = body;
    // Bun waits seconds before sending an empty file slice; an empty body goes out at once.
    if (end < start) return bunResponse(EMPTY, decided, requestId);
    if (bytes) return bunResponse(bytes.subarray(start, end + 1), decided, requestId);
    if (derived) return derivativeSlice(decided, start, end, requestId);
    return fileSlice(decided, start, end, requestId);
  }

  /**
   * A stored derivative's slice: its file is looked at for each answer (one stat), never taken from
   * `files`, since another instance may evict it (Bun would answer a vanished file with an error).
   * Gone: forgotten as stored, and the app makes it again.
   */
  async function derivativeSlice(decided: Delivered, start: number, end: number, requestId: string) {
    const file = await content.localFile(decided.facts);
    if (!file) images?.missing(decided.facts);
    return file && sliceAnswer(file, start, end, decided, requestId);
  }

  /** The answer with a slice of the blob's file: in this call when the file is known already, as most reads find it. */
  function fileSlice(
    decided: Delivered,
    start: number,
    end: number,
    requestId: string,
  ): Response | Promise<Response | null> {
    const known = knownFile(decided.facts);
    if (known) return sliceAnswer(known, start, end, decided, requestId);
    return localFile(decided.facts).then((file) => file && sliceAnswer(file, start, end, decided, requestId));
  }

  function sliceAnswer(file: LocalBlobFile, start: number, end: number, decided: Delivered, requestId: string) {
    const body = bunApi()
      .file(file.path)
      .slice(file.offset + start, file.offset + end + 1);
    return bunResponse(body, decided, requestId);
  }

  /** Null: the app answers, with the row found here (it is not looked up twice: S3's large blobs always come this way). */
  const toApp = (req: Request, row: ResourceRow, query: DeliveryQuery) => {
    handOverRow(req, row, query);
    return null;
  };

  // Not found, deleted, 412, 416… (thrown or rejected): null, and the app answers it with its problem details.
  const orNull = (pending: Promise<Response | null>) => pending.catch(() => null);

  /** `row`'s answer for `query` (the core's), or null when the app must give it. */
  function rowAnswer(req: Request, row: ResourceRow, query: DeliveryQuery, requestId: string) {
    const header = (name: string) => req.headers.get(name);
    const now = core.now(row, query, req.method, header, req.headers.get("host") ?? undefined);
    const derived = query.image !== undefined;
    if (now instanceof Promise) return now.then((decided) => decided && respond(decided, requestId, derived));
    return now && respond(now, requestId, derived);
  }

  /**
   * The problem for an error Bun met sending a file slice (Bun calls the server's `error`, not this
   * handler): a blob file known here and gone since is BLOB_MISSING, and forgotten; else null.
   */
  function sliceFailure(err: unknown): ProblemError | null {
    const { code, path } = (err ?? {}) as { code?: unknown; path?: unknown };
    if (code !== "ENOENT") return null;
    for (const [blobKey, file] of files) {
      if (file.path !== path) continue;
      files.delete(blobKey);
      return content.missing(blobKey);
    }
    return null;
  }

  /**
   * The answer (a promise of it when the row or the blob must be read first), or null. With the
   * synchronous row lookup (Node's and Bun's prepared read connection) a cached row and blob are
   * answered in this call: no promise, no microtask (Bun's handler in-process 10.2–11.1 → 8.1–8.5 µs
   * per request; 1.11× the req/s under wrk).
   */
  const handle = (req: Request, requestId: string): Response | null | Promise<Response | null> => {
    if (!anonymousRead && !signedLinks) return null;
    const uri = runtimeRead(req.method, targetOf(req.url));
    if (!uri) return null;
    const query = fastReadQuery(reads, uri);
    if (!query) return null;
    try {
      const row = resources.findByUriNow(uri.context, uri.path, ANONYMOUS_PRINCIPAL);
      if (row) {
        const answered = rowAnswer(req, row, query, requestId);
        return answered instanceof Promise
          ? orNull(answered.then((res) => res ?? toApp(req, row, query)))
          : (answered ?? toApp(req, row, query));
      }
    } catch {
      return null;
    }
    return orNull(
      resources
        .findByUri(uri.context, uri.path, ANONYMOUS_PRINCIPAL)
        .then(async (row) => (await rowAnswer(req, row, query, requestId)) ?? toApp(req, row, query)),
    );
  };
  return Object.assign(handle, { sliceFailure });
}
