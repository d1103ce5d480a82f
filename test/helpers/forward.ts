import { type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";

/**
 * Passes one request on to `upstream` as it is and its answer back: the core of the tests' shim
 * proxies in front of s3rver. One connection per request (`agent: false`): a pooled keep-alive socket
 * that s3rver closed while the machine stalled would be reused and fail (nodejs/node#47130), and the
 * service would see a storage error no real bucket gave.
 */
export function forwardTo(upstream: URL, req: IncomingMessage, res: ServerResponse): void {
  const { hostname: host, port } = upstream;
  const forward = httpRequest(
    { host, port, method: req.method, path: req.url, headers: req.headers, agent: false },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", () => res.destroy());
  req.pipe(forward);
}
