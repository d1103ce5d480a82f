/**
 * CORS for a bearer-token API: any origin may call it (tokens are not ambient credentials). Hono's `cors()` touches `c.res` before the handler runs, which makes Hono copy
 * the handler's Response into a new one — on @hono/node-server that turns every Uint8Array body
 * into a Web stream (a quick bench of 4 KiB getData went from 4.2k to 7.4k req/s once responses
 * were no longer copied). This sets its headers afterwards, on the response the handler produced.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env.js";

export interface CorsOptions {
  allowHeaders: string[];
  exposeHeaders: string[];
  allowMethods: string[];
  /** Seconds a browser may cache a preflight answer. */
  maxAge: number;
}

/** The API's CORS policy (what a browser client may send and read). */
export const API_CORS: CorsOptions = {
  // Only the methods some route answers: GET/HEAD/POST throughout, PATCH/DELETE for tus uploads.
  allowMethods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
  // Every request header the API reads, the five RFC 9110 conditionals included (412 needs If-Unmodified-Since).
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "Range",
    "If-None-Match",
    "If-Modified-Since",
    "If-Match",
    "If-Unmodified-Since",
    "If-Range",
    "X-Request-Id",
    "Want-Repr-Digest",
    "Want-Content-Digest", // RFC 9530
    "Tus-Resumable",
    "Upload-Length",
    "Upload-Offset",
    "Upload-Metadata",
    "Upload-Checksum", // tus 1.0
    "X-D1-Bookmark", // Workers: a writer's next request reads its own writes (runtime/worker/d1-sessions.ts)
  ],
  // Beyond the CORS-safelisted ones: what a script needs to act on an answer (Retry-After of 423/503, Allow of 405).
  exposeHeaders: [
    "Location",
    "Link",
    "ETag",
    "Content-Range",
    "Content-Disposition",
    "Accept-Ranges",
    "WWW-Authenticate",
    "Retry-After",
    "Allow",
    "X-Request-Id",
    "Repr-Digest",
    "Content-Digest",
    "Tus-Resumable",
    "Tus-Version",
    "Tus-Extension",
    "Tus-Max-Size",
    "Tus-Checksum-Algorithm",
    "Upload-Offset",
    "Upload-Length",
    "Upload-Expires",
  ],
  maxAge: 600,
};

/**
 * What a content answer (a blob's 200, 206 or 304, answerBlob) can carry beyond the CORS-safelisted
 * headers. Content answers expose these alone: the API's whole list made a 288-byte header line on
 * every answer of the hottest path: a bare node:http server sending the app's head answered 4 KiB
 * 9 % faster with the short list (44.2k → 48.3k req/s, every round faster).
 */
export const CONTENT_EXPOSE_HEADERS = [
  "ETag",
  "Content-Range",
  "Content-Disposition",
  "Accept-Ranges",
  "X-Request-Id",
  "Repr-Digest",
  "Content-Digest",
  "Link", // the versioned URL (rel="duplicate"): a browser client reads it to cache forever
  "Vary",
];

const EXPOSE = "access-control-expose-headers";

/** The headers every (non-preflight) response carries, exposing `exposeHeaders`. */
export const corsResponseHeaders = (exposeHeaders: readonly string[]) => ({
  "access-control-allow-origin": "*",
  [EXPOSE]: exposeHeaders.join(","),
});

/** A content answer's CORS headers (the fast paths add them; the middleware leaves an answer's own). */
export const CONTENT_CORS_HEADERS = corsResponseHeaders(CONTENT_EXPOSE_HEADERS);

export function cors(options: CorsOptions): MiddlewareHandler<AppEnv> {
  const exposed = options.exposeHeaders.join(",");
  const preflight = {
    ...corsResponseHeaders(options.exposeHeaders),
    "access-control-allow-methods": options.allowMethods.join(","),
    "access-control-allow-headers": options.allowHeaders.join(","),
    "access-control-max-age": String(options.maxAge),
  };
  return async (c, next) => {
    // A preflight (Fetch: OPTIONS naming a method); other OPTIONS requests reach the routes (tus).
    if (c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined) {
      return new Response(null, { status: 204, headers: preflight });
    }
    await next();
    c.res.headers.set("access-control-allow-origin", "*");
    // Content answers name their own (serveBlob: CONTENT_EXPOSE_HEADERS).
    if (!c.res.headers.has(EXPOSE)) c.res.headers.set(EXPOSE, exposed);
  };
}
