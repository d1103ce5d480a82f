/**
 * Requests node:http refuses before any handler sees them (malformed request line or header, a
 * head over its size limit, a head that took too long) answered as problem+json instead of Node's
 * empty-bodied default. Wired to the server's 'clientError' event; the connection closes after it.
 */
import type { Duplex } from "node:stream";
import { type ProblemCode, ProblemError, toProblemDocument } from "../../problems.js";
import type { Logger } from "../../lib/logger.js";
import { requestIdFrom } from "../../http/middleware/request-context.js";

/** The same statuses Node's own default answer uses, by its error code. */
function problemFor(code: string | undefined): ProblemError {
  const as = (problem: ProblemCode, detail: string) => new ProblemError(problem, detail);
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return as("HEADERS_TOO_LARGE", "the request line and headers are too large");
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return as("PAYLOAD_TOO_LARGE", "the chunk extensions of the request body are too large");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return as("REQUEST_TIMEOUT", "the request line and headers did not arrive in time");
    default:
      return as(
        "VALIDATION_FAILED",
        `malformed HTTP request (${code ?? "unparseable"}): check the request line and headers`,
      );
  }
}

/** Renders `err`'s answer as raw HTTP/1.1 bytes: a problem document, then the connection closes. */
export function clientErrorAnswer(code: string | undefined, requestId: string): string {
  const problem = problemFor(code);
  const doc = toProblemDocument(problem, undefined, requestId);
  const body = JSON.stringify(doc);
  return (
    `HTTP/1.1 ${doc.status} ${doc.title}\r\n` +
    "Content-Type: application/problem+json\r\n" +
    "Cache-Control: no-store\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    "Connection: close\r\n\r\n" +
    body
  );
}

/** The answer node:http is writing on the socket, if any (the field Node's own default checks). */
type ServerSocket = Duplex & { _httpMessage?: { headersSent?: boolean } | null };

/** A 'clientError' listener: answers unless another answer is already going out, then closes. */
export function answerClientErrors(logger: Logger) {
  return (err: NodeJS.ErrnoException, socket: ServerSocket) => {
    // A reset, or an answer already half-sent on this connection: nobody to tell, or too late to.
    if (err.code === "ECONNRESET" || !socket.writable || socket._httpMessage?.headersSent) {
      socket.destroy();
      return;
    }
    const requestId = requestIdFrom(undefined);
    logger.info("request refused by the HTTP parser", { requestId, code: err.code });
    socket.end(clientErrorAnswer(err.code, requestId));
    // Close for good once the answer is flushed, like Node's own default does.
    socket.once("finish", () => socket.destroy());
  };
}
