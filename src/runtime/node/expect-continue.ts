/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1), which curl sends before a body over 1 MiB. node:http
 * answers it with 100 Continue as soon as the head arrives, before any guard ran: the client then
 * sends its 100 MB only to read 401. Here 100 Continue goes out when the app first reads the body,
 * which it does after the guards and the checks that need no body (token and role, declared size,
 * tenant quota once the upload's fields are read); an app that answers first never sends it, and
 * its refusal is the answer to the head alone. node:http then says `Connection: close` (the client
 * may send the body anyway), and unread-body.ts closes that connection gracefully.
 */
import type { IncomingMessage, RequestListener } from "node:http";

/** A 'checkContinue' listener: `next` with 100 Continue sent on the first read of the body. */
export function continueOnFirstRead(next: RequestListener): RequestListener {
  return (req, res) => {
    const read = req._read;
    req._read = function (this: IncomingMessage, size: number) {
      req._read = read;
      // Not after an answer: a refusal's own drain of the body reads it too.
      if (!res.headersSent) res.writeContinue();
      return read.call(this, size);
    };
    next(req, res);
  };
}
