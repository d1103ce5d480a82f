/**
 * The one place a content answer (getData, getDataUuid, postData, a revision's data) is decided:
 * from the content, the request's method, its header fields and its host to a plain description —
 * status, header fields, which bytes of the content's blob go in the body, or the problem to answer
 * with. No I/O and no runtime types, so the route (./web.ts) and the Node and Bun fast paths
 * (runtime/node/fast-get.ts, runtime/bun/fast-get.ts) only send what it says, as hono's
 * serve-static middleware decides under its per-runtime adapters. Which content a getData answers
 * with (the row's, a version's, a derivative's) and under which policy is ./core.ts's. A response
 * header of content (caching, links…) is added here, in `answerBlob` or the plain head, and every
 * sender sends it.
 */
import type { Multipart } from "../http/byteranges.js";
import { answerBlob, type ResponseHeaders } from "../http/answer-blob.js";
import { contentEntities } from "./content-entity.js";
import { CONTENT_CORS_HEADERS } from "../http/middleware/cors.js";
import { isPlainRequest, isPlainRevalidation, plainHeads, plainRange } from "../http/plain-heads.js";
import { contentRange } from "../http/range.js";
import { ProblemError } from "../problems.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ContentService } from "../services/content.js";

/** A request header field by lowercase name; null or undefined when absent. */
export type RequestField = (name: string) => string | null | undefined;

/** Bytes `start`…`end` (inclusive; `end < start`: none) of the row's blob; `whole`: the blob unranged. */
export interface ContentBody {
  start: number;
  end: number;
  whole: boolean;
}

/** What every sent answer carries beside its status, head and body. */
interface Sent {
  problem?: undefined;
  /** The content the answer is of: its blob holds the body's bytes. */
  facts: ContentFacts;
  /**
   * Fields every sender sets over `head` and `fields` (a versioned URL's, a revision's or a signed
   * link's Cache-Control, a derivative's Vary: http/cache-policy.ts, derivative-read.ts); undefined: none.
   */
  policy: ResponseHeaders | undefined;
}

export type ContentAnswer =
  | (Sent & {
      status: 200 | 206 | 304;
      /**
       * The header fields but `fields` and the request id (the senders add it; the app's
       * middleware does on the route). `shared`: the row's plain head, one frozen object for every
       * plain answer of that row and host, so a sender may keep its own form of it by identity;
       * otherwise a fresh object that belongs to this answer (a sender may add to it).
       */
      head: ResponseHeaders;
      shared: boolean;
      /** Set over `head` (a plain range's framing), or undefined. */
      fields: ResponseHeaders | undefined;
      /** What the body holds; null: no body (HEAD, 304). */
      body: ContentBody | null;
      multipart?: undefined;
    })
  | (Sent & {
      status: 206;
      head: ResponseHeaders;
      shared: false;
      fields: undefined;
      body: null;
      /** Several ranges: the body is their multipart/byteranges, read part by part. */
      multipart: Multipart;
    })
  /** 405, 412 or 416 (RFC 9110), for the app's problem renderer. */
  | { problem: ProblemError };

const NO_FIELD: RequestField = () => undefined;

export interface ContentAnswers {
  decide(
    row: ContentFacts,
    method: string,
    header: RequestField,
    host: string | undefined,
    policy?: ResponseHeaders,
  ): ContentAnswer;
}

function createContentAnswers(content: Pick<ContentService, "read" | "contentOrigin">): ContentAnswers {
  const entities = contentEntities(content);
  /**
   * A plain GET's head, built once per row and host (plain-heads.ts): 4 KiB getData went 13.5k →
   * 26.7k req/s on Node, 36.5k → 49.2k on Bun (bench small-files) once the fast paths stopped
   * running RFC 9110's evaluation, the content policy and a header spread per request.
   */
  const plainHead = plainHeads((row: ContentFacts, host: string | undefined) =>
    Object.freeze({
      ...answerBlob("GET", NO_FIELD, entities.serve(row, host).entity).headers,
      ...CONTENT_CORS_HEADERS,
    }),
  );
  /**
   * The 304 of a plain revalidation (`isPlainRevalidation`), built once per row and host as the plain
   * head is: the evaluation's own answer to a request that sends the row's ETag, with the content
   * CORS headers. A CDN revalidating, or a browser with the content cached, asks this on every use.
   */
  const notModifiedHead = plainHeads((row: ContentFacts, host: string | undefined) => {
    const { entity } = entities.serve(row, host);
    const revalidating: RequestField = (name) => (name === "if-none-match" ? entity.etag : undefined);
    const head: ResponseHeaders = { ...answerBlob("GET", revalidating, entity).headers, ...CONTENT_CORS_HEADERS };
    return Object.freeze(head);
  });
  const whole = (row: ContentFacts): ContentBody => ({ start: 0, end: row.size - 1, whole: true });

  return {
    decide(row, method, header, host, policy) {
      const sent = method === "GET";
      if (sent || method === "HEAD") {
        if (isPlainRequest(header)) {
          const head = plainHead(row, host);
          const body = sent ? whole(row) : null;
          return { status: 200, head, shared: true, fields: undefined, body, facts: row, policy };
        }
        if (header("if-none-match") != null) {
          const head = notModifiedHead(row, host);
          if (head.etag && isPlainRevalidation(header, head.etag))
            return { status: 304, head, shared: true, fields: undefined, body: null, facts: row, policy };
        }
        const range = sent ? plainRange(header, row.size) : null;
        if (range) {
          const fields = {
            "content-length": String(range.end - range.start + 1),
            "content-range": contentRange(range, row.size),
          };
          const body = { start: range.start, end: range.end, whole: false };
          return { status: 206, head: plainHead(row, host), shared: true, fields, body, facts: row, policy };
        }
      }
      let result: ReturnType<typeof answerBlob>;
      try {
        result = answerBlob(method, header, entities.serve(row, host).entity);
      } catch (err) {
        if (err instanceof ProblemError) return { problem: err };
        throw err;
      }
      // answerBlob's headers are this answer's own: added to in place, in the order a spread of
      // both would give (with a two-object spread, decide's own code was ≈ 40 % of a 304 decision on Node).
      const head = Object.assign(result.headers, CONTENT_CORS_HEADERS);
      if (result.multipart) {
        const { multipart } = result;
        return { status: 206, head, shared: false, fields: undefined, body: null, multipart, facts: row, policy };
      }
      const { status, range } = result;
      const body =
        !sent || status === 304 ? null : range ? { start: range.start, end: range.end, whole: false } : whole(row);
      return { status, head, shared: false, fields: undefined, body, facts: row, policy };
    },
  };
}

/** One per content service: the route and the runtimes' fast paths share its plain heads. */
const answersOf = new WeakMap<object, ContentAnswers>();

/** The content answers of `content`'s rows (built once per service; call it once, not per request). */
export function contentAnswers(content: Pick<ContentService, "read" | "contentOrigin">): ContentAnswers {
  let answers = answersOf.get(content);
  if (!answers) {
    answers = createContentAnswers(content);
    answersOf.set(content, answers);
  }
  return answers;
}
