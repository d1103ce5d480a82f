/**
 * A route's body policy: at most `maxSize` bytes (413 PAYLOAD_TOO_LARGE, refused from a declared
 * Content-Length before anything is read, else as the bytes pass), and the request's own digests
 * checked over those bounded bytes (request-digest.ts). Bound to a route beside its guard
 * (routes/router.ts `guarded`), so it runs after the guard and only where the route matched.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ProblemError } from "../../problems.js";
import { verifyRequestDigests } from "./request-digest.js";

/** JSON request bodies carry metadata only; content arrives by URI, inline base64 or a streamed upload. */
export const MAX_JSON_BODY_BYTES = 64 * 1024;

export function boundedBody(maxSize: number, what: string): MiddlewareHandler {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw new ProblemError("PAYLOAD_TOO_LARGE", `${what} are limited to ${maxSize} bytes`);
    },
  });
  // The limit wraps the digest check: the bytes hashed are the bounded ones.
  return (c, next) =>
    limit(c, async () => {
      await verifyRequestDigests(c, next);
    });
}

/** Every JSON body but those that may carry resourceBinary. */
export const jsonBody = boundedBody(MAX_JSON_BODY_BYTES, "JSON request bodies");

/** Room for `maxInlineBytes` of content as base64, plus the metadata beside it (create/update). */
export const inlineBody = (maxInlineBytes: number, what: string) =>
  boundedBody(Math.ceil(maxInlineBytes / 3) * 4 + MAX_JSON_BODY_BYTES, what);
