/**
 * The delivery core's one question, asked by the getData route and both runtimes' fast paths:
 * given the row, its parsed query (query.ts), the request's fields (`Accept` among them) and the
 * mode, what bytes and what head. Which content answers (the row's own, the version `?v=` names,
 * an image derivative) and under which policy is decided here; the answer itself by decide.ts. Two
 * modes:
 * - `now` (the fast paths): only what needs no database read and no transform — a plain getData,
 *   `?v=` of the current content, a derivative already stored — and only 200, a single range's 206
 *   and 304; null hands the request to the app. In the caller's call unless a derivative must be
 *   looked for (no promise, no extra object: the answer is decide.ts's one object).
 * - `answer` (the route): every answer, a version's from the revisions, a derivative made when not
 *   stored; problems are thrown for the app's renderer.
 */
import type { ImageDerivatives } from "../images/derivatives.js";
import type { ResponseHeaders } from "../http/answer-blob.js";
import { answerCacheHeaders } from "../http/cache-policy.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ResourceRow } from "../metadata/schema.js";
import type { ContentService } from "../services/content.js";
import type { RevisionService } from "../services/revisions.js";
import { type ContentAnswer, contentAnswers, type RequestField } from "./decide.js";
import { derivativePolicy, storedDerivative } from "./derivative-read.js";
import type { DeliveryQuery } from "./query.js";
import { currentVersionOf } from "./versioned-read.js";

/** An answer to send (not a problem). */
export type Delivered = Exclude<ContentAnswer, { problem: object }>;

export interface DeliveryCore {
  /**
   * A fast path's answer for `row` and `query`, or null: the app answers (an earlier version, a
   * derivative not yet made, several ranges, 412, 416, a row the core cannot describe).
   */
  now(
    row: ResourceRow,
    query: DeliveryQuery,
    method: string,
    header: RequestField,
    host: string | undefined,
  ): Delivered | null | Promise<Delivered | null>;
  /**
   * The route's answer for `row` and `query` under `cache` (the Cache-Control of a versioned URL or
   * a signed link: http/cache-policy.ts); throws the problem (405, 412, 416, an unknown version, a
   * transform's refusal).
   */
  answer(
    row: ResourceRow,
    query: DeliveryQuery,
    method: string,
    header: RequestField,
    host: string | undefined,
    cache: ResponseHeaders | undefined,
    /** Who asks (a link, a user, anonymous): transform slots are shared fairly between callers (images/limit.ts). */
    caller?: string,
  ): Promise<Delivered>;
}

export interface DeliveryDeps {
  content: Pick<ContentService, "read" | "contentOrigin" | "cache"> & Partial<Pick<ContentService, "directReadMin">>;
  /** Image derivatives; absent: image parameters are ignored (query.ts never asks for a transform). */
  images?: ImageDerivatives;
  /** The route's versions; the fast paths answer the current one without them. */
  revisions?: Pick<RevisionService, "byVersion">;
}

/** The delivery core of `content`'s rows (call it once, not per request). */
export function deliveryCore({ content, images, revisions }: DeliveryDeps): DeliveryCore {
  const answers = contentAnswers(content);
  // A versioned answer's policy (the route's for `?v=`): one object, so a sender can keep its form of it.
  const immutable = answerCacheHeaders(content.cache, true, undefined);
  // GETs of content this large are the route's (a redirect to the bucket); 0: none.
  const directMin = content.directReadMin ?? 0;

  /** `facts`' answer when a fast path may send it; else null. */
  function sendable(
    facts: ContentFacts,
    method: string,
    header: RequestField,
    host: string | undefined,
    policy: ResponseHeaders | undefined,
  ): Delivered | null {
    let answer: ContentAnswer;
    try {
      answer = answers.decide(facts, method, header, host, policy);
    } catch {
      return null; // a row the core cannot describe (a bug): the app answers it, with its problem details
    }
    // 412, 416, several ranges: the app answers them, with its problem details or its multipart body.
    return answer.problem || answer.multipart ? null : answer;
  }

  return {
    now(row, query, method, header, host) {
      if (directMin > 0 && method === "GET" && row.size >= directMin) return null;
      const { version, image, cache } = query;
      if (version !== undefined) {
        const current = currentVersionOf(row, version);
        return current && sendable(current, method, header, host, cache ?? immutable);
      }
      if (!image || !images) return sendable(row, method, header, host, cache);
      // A link's holder names presets only, and the route checks that: derivatives of signed links are the route's.
      if (cache) return null;
      const made = storedDerivative(images, row, image, header("accept") ?? "");
      if (!(made instanceof Promise)) return made && sendable(made.facts, method, header, host, derivativePolicy(made));
      return made.then((found) => found && sendable(found.facts, method, header, host, derivativePolicy(found)));
    },

    async answer(row, query, method, header, host, cache, caller) {
      const { version, image } = query;
      let source: ContentFacts = row;
      if (version !== undefined) {
        if (!revisions) throw new Error("a versioned read needs the revisions (deliveryCore's deps)");
        source = await revisions.byVersion(row, version);
      }
      let facts = source;
      let policy = cache;
      if (image && images) {
        // A derivative is content of its own (ETag, Range, 304), under the source URL's cache policy.
        const made = await images.derive(source, image, header("accept") ?? "", caller);
        facts = made.facts;
        const varies = derivativePolicy(made);
        if (varies) policy = { ...cache, ...varies };
      }
      const answer = answers.decide(facts, method, header, host, policy);
      if (answer.problem) throw answer.problem;
      return answer;
    },
  };
}
