/**
 * A request's own Content-Digest / Repr-Digest (RFC 9530, sha-256 or sha-512) is checked, never
 * ignored: an integrity claim the server does not verify would be worse than none. Bodies read whole
 * (JSON, already bounded by the body limits) are hashed here before any handler acts on them; Hono
 * keeps the bytes, so the validators read the same ones. A streamed multipart upload is hashed as it
 * is read (`digestedBody`, used by the upload route): the digest covers the body as sent, framing
 * included, and the file part's own digest fields keep describing the file. tus PATCH bodies are
 * checked by the tus route, as an Upload-Checksum.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ProblemError } from "../../problems.js";
import {
  ALL_REQUEST_DIGEST_ALGORITHMS,
  type RequestDigest,
  requestDigestChecker,
  requestDigestMismatch,
  requestDigests,
} from "../request-digests.js";

const header = (c: Context) => (name: string) => c.req.header(name);

/** The digests a request announces for its content, in every algorithm we can check; 400 if malformed. */
export const announcedDigests = (c: Context): RequestDigest[] =>
  requestDigests(header(c), ALL_REQUEST_DIGEST_ALGORITHMS);

/** Hashes the whole (bounded) body and refuses the request if an announced digest does not match. */
export const verifyRequestDigests: MiddlewareHandler = async (c, next) => {
  const digests = announcedDigests(c);
  if (digests.length > 0) {
    const checker = requestDigestChecker(digests);
    checker.update(new Uint8Array(await c.req.arrayBuffer()));
    const wrong = checker.mismatch();
    if (wrong) throw requestDigestMismatch(wrong);
  }
  await next();
};

/**
 * `body` passed through unchanged and hashed as it is read. `verify()` throws 422 DIGEST_MISMATCH
 * unless the body was read to its end and matches every digest: call it before committing anything.
 */
export function digestedBody(body: ReadableStream<Uint8Array>, digests: readonly RequestDigest[]) {
  const checker = requestDigestChecker(digests);
  const reader = body.getReader();
  let ended = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          return controller.close();
        }
        checker.update(value);
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return {
    body: stream,
    verify(): void {
      const [first] = digests;
      if (first && !ended) {
        // Only a multipart epilogue longer than the parser reads (64 KiB) gets here.
        const detail = `the request content was not read to its end, so its ${first.header} cannot be verified`;
        throw new ProblemError("DIGEST_MISMATCH", detail, { errors: [{ pointer: `/header/${first.header}`, detail }] });
      }
      const wrong = checker.mismatch();
      if (wrong) throw requestDigestMismatch(wrong);
    },
  };
}
