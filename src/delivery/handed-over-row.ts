/**
 * A getData row the runtime's fast path (runtime/node/fast-get.ts, runtime/bun/fast-get.ts) looked up
 * and then left to the app (a blob neither in memory nor in a local file: S3, R2; a derivative not
 * yet made; an earlier version), with its query as the fast path parsed it (query.ts), so the app
 * neither looks the same row up nor parses the same query a second time. Keyed by the request
 * object both see (Node: the IncomingMessage, the adapter's `env.incoming`; Bun: the Request handed
 * to `app.fetch`), held weakly and taken once. The app still checks the request's own principal
 * against the row (resources.findByUri).
 */
import type { ResourceRow } from "../metadata/schema.js";
import type { DeliveryQuery } from "./query.js";

export interface HandedOver {
  row: ResourceRow;
  query: DeliveryQuery;
}

const handed = new WeakMap<object, HandedOver>();

/** Leaves `row`, and `query` parsed, for the app's answer to `request`. */
export function handOverRow(request: object, row: ResourceRow, query: DeliveryQuery): void {
  handed.set(request, { row, query });
}

/** The row and query handed over with this request (its Node `env.incoming` or its Request), once; else undefined. */
export function takeHandedOverRow(env: unknown, request: Request): HandedOver | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  const key = typeof incoming === "object" && incoming !== null ? incoming : request;
  const found = handed.get(key);
  handed.delete(key);
  return found;
}
