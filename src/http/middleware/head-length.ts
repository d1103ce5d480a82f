/**
 * HEAD answers the headers GET would send (RFC 9110 §9.3.2), Content-Length included. Hono runs the
 * GET handler for HEAD and drops the body, and @hono/node-server only counts a body it writes, so a
 * JSON document (/apiversion, /openapi.json) lost its length. Those are small texts built in memory:
 * measuring a copy costs nothing a GET would not. Streamed content (getData) sets its own length.
 */
import type { MiddlewareHandler } from "hono";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export function headContentLength(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.req.method !== "HEAD" || c.res.headers.has("content-length") || !c.res.body) return;
    if (!JSON_TYPE.test(c.res.headers.get("content-type") ?? "")) return;
    const length = (await c.res.clone().arrayBuffer()).byteLength;
    c.res.headers.set("content-length", String(length));
  };
}
