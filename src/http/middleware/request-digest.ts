/**
 * A request's own Content-Digest / Repr-Digest (RFC 9530, sha-256) is checked, never ignored: an
 * integrity claim the server does not verify would be worse than none. Bodies read whole (JSON,
 * already bounded by the body limits) are hashed here before any handler acts on them; Hono keeps
 * the bytes, so the validators read the same ones. A streamed multipart upload is refused with its
 * digest: that digest would cover the multipart framing, which is never held, not the file (the
 * file part carries its own digest fields). tus PATCH bodies are checked by the tus route, as an
 * Upload-Checksum.
 */
import type { Context, MiddlewareHandler } from "hono";
import { Sha256 } from "../../lib/sha256.js";
import { ProblemError } from "../../problems.js";
import { requestDigestMismatch, requestDigests } from "../digest-fields.js";

const header = (c: Context) => (name: string) => c.req.header(name);

/** Hashes the whole (bounded) body and refuses the request if an announced digest does not match. */
export const verifyRequestDigests: MiddlewareHandler = async (c, next) => {
  const digests = requestDigests(header(c));
  if (digests.length > 0) {
    const actual = new Sha256().update(new Uint8Array(await c.req.arrayBuffer())).hex();
    const wrong = digests.find((d) => d.hex !== actual);
    if (wrong) throw requestDigestMismatch(wrong);
  }
  await next();
};

/** For streamed multipart bodies: a request-level digest cannot be checked before the file is committed. */
export const refuseRequestDigests: MiddlewareHandler = async (c, next) => {
  const [digest] = requestDigests(header(c));
  if (digest) {
    const detail = `a request-level ${digest.header} would describe the multipart body, not the file: send it on the file part, or as expectedSha256`;
    throw new ProblemError("VALIDATION_FAILED", detail, { errors: [{ pointer: `/header/${digest.header}`, detail }] });
  }
  await next();
};
