import { type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";

/** Passes one request on to `upstream` as it is and its answer back: the core of the tests' shim proxies in front of s3rver. */
export function forwardTo(upstream: URL, req: IncomingMessage, res: ServerResponse): void {
  const forward = httpRequest(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", () => res.destroy());
  req.pipe(forward);
}
