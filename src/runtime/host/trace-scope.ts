/**
 * The trace context of the request being served, carried through its async work (Node and Bun's
 * AsyncLocalStorage) to the origin fetcher, which sends a child `traceparent` (metrics/trace-context.ts).
 * Entered only for requests that brought a valid `traceparent`: the others pay nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { childTraceparent, type TraceContext } from "../../metrics/trace-context.js";

const scope = new AsyncLocalStorage<TraceContext>();

/** Runs `fn` as part of the trace `context` (none: as it is). */
export const inTrace = <T>(context: TraceContext | null, fn: () => T): T => (context ? scope.run(context, fn) : fn());

/** The `traceparent` for a call made now: a child of the request's trace, or undefined outside one. */
export function outgoingTraceparent(): string | undefined {
  const context = scope.getStore();
  return context ? childTraceparent(context) : undefined;
}
