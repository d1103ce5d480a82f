/**
 * A getData row the runtime's fast path (runtime/node/fast-get.ts, runtime/bun/fast-get.ts) looked up
 * and then left to the app (a blob neither in memory nor in a local file: S3, R2), so the app does
 * not look the same row up a second time. Keyed by the request object both see (Node: the
 * IncomingMessage, the adapter's `env.incoming`; Bun: the Request handed to `app.fetch`), held weakly
 * and taken once. The app still checks the request's own principal against it (resources.findByUri).
 */
import type { ResourceRow } from "../metadata/schema.js";

const rows = new WeakMap<object, ResourceRow>();

/** Leaves `row` for the app's answer to `request`. */
export function handOverRow(request: object, row: ResourceRow): void {
  rows.set(request, row);
}

/** The row handed over with this request (its Node `env.incoming` or its Request), once; else undefined. */
export function takeHandedOverRow(env: unknown, request: Request): ResourceRow | undefined {
  const incoming = (env as { incoming?: unknown } | undefined)?.incoming;
  const key = typeof incoming === "object" && incoming !== null ? incoming : request;
  const row = rows.get(key);
  rows.delete(key);
  return row;
}
