/**
 * The app's content sender: the core's answer (decide.ts, core.ts) as a Web Response, the body
 * streamed from the blob store (`ContentService.read`). Each body it streams is remembered with the
 * bytes it holds (`sentContentOf`), so a runtime that sends files itself (Bun.serve drops
 * Content-Length on streamed bodies) can send the same bytes from the blob's local file
 * (`ContentService.localFile`).
 */
import type { ResponseHeaders } from "../http/answer-blob.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ContentService } from "../services/content.js";
import type { Delivered } from "./core.js";
import { contentAnswers, type ContentBody, type RequestField } from "./decide.js";

/** The content and the bytes of its blob a streamed body holds. */
export interface SentContent {
  row: ContentFacts;
  body: ContentBody;
}

/** Bodies this sender streamed; entries go with their streams. */
const sent = new WeakMap<ReadableStream<Uint8Array>, SentContent>();

/** What `body` holds, when it is a content body this sender streamed. */
export const sentContentOf = (body: ReadableStream<Uint8Array>): SentContent | undefined => sent.get(body);

const NO_FIELD: RequestField = () => undefined;

/**
 * 307 to a presigned GET on the bucket (CMS_DIRECT_READ_MIN_BYTES), which answers with the same
 * type, disposition and caching; a Range is sent again there. The redirect itself is never stored
 * (its URL expires), and carries the content's CORS fields so cross-origin readers may follow it.
 */
function redirect(location: string, headers: ResponseHeaders): Response {
  const fields: ResponseHeaders = { location, "cache-control": "no-store" };
  for (const [name, value] of Object.entries(headers)) if (name.startsWith("access-control-")) fields[name] = value;
  return new Response(null, { status: 307, headers: fields });
}

/** Answers content requests of `content`'s rows with Web Responses (call it once, not per request). */
export function webContentSender(
  content: Pick<ContentService, "read" | "ensurePresent" | "contentOrigin"> &
    Partial<Pick<ContentService, "directRead">>,
) {
  const answers = contentAnswers(content);

  /**
   * `answer` (to a request of `method`) as a Response, its body streamed from the blob store.
   * `linkSeconds`: a signed link's remaining lifetime, which a redirect's URL may not outlive.
   */
  async function respond(answer: Delivered, method: string, linkSeconds?: number): Promise<Response> {
    const { status, head, fields, policy, body, multipart, facts } = answer;
    const headers = fields || policy ? { ...head, ...fields, ...policy } : head;
    // Several ranges read nothing before their head: a missing blob answers BLOB_MISSING, not a body that
    // breaks off. HEAD is answered from the row alone (as S3's is): no storage call on the hot path.
    if (multipart && method === "GET") await content.ensurePresent(facts);
    if (multipart) {
      const stream = method === "GET" ? multipart.stream((range) => content.read(facts, range)) : null;
      return new Response(stream, { status, headers });
    }
    // An empty blob has nothing to stream, so storage isn't touched.
    if (!body || body.end < body.start) return new Response(null, { status, headers });
    const direct = method === "GET" ? await content.directRead?.(facts, headers, linkSeconds) : null;
    if (direct) return redirect(direct, headers);
    const bytes = await content.read(facts, body.whole ? undefined : body);
    if (bytes instanceof ReadableStream) sent.set(bytes, { row: facts, body });
    return new Response(bytes, { status, headers });
  }

  /**
   * The answer to `method` with `header` on `host` for `row`; 405/412/416 are thrown as
   * ProblemErrors for the app's problem renderer. Without `header`: the request carries no field
   * that changes the answer (postData: the whole representation). `policy` (Cache-Control of a
   * versioned URL, a revision or a signed link: http/cache-policy.ts) is set over the row's own;
   * `linkSeconds` as respond's.
   */
  async function send(
    row: ContentFacts,
    method: string,
    header: RequestField = NO_FIELD,
    host: string | undefined = undefined,
    policy: ResponseHeaders | undefined = undefined,
    linkSeconds: number | undefined = undefined,
  ): Promise<Response> {
    const answer = answers.decide(row, method, header, host, policy);
    if (answer.problem) throw answer.problem;
    return respond(answer, method, linkSeconds);
  }

  return { send, respond };
}
