/**
 * The URLs a change made stale in a cache in front of the app (the Worker's colo cache,
 * runtime/worker/edge-cache.ts), told by the lifecycle routes, which parsed the request already: the
 * runtime never reads a request or response body a second time to learn them. Keyed by the
 * request's execution context (the Worker's `ctx`, one per request; the Request itself is not
 * stable: Hono's body limit replaces it), held weakly and taken once after the answer.
 */

/** What a cache in front may hold of resources; present only where there is one (the Worker's edge). */
export interface CachedContent {
  /** Every path a cache may hold for resource `uid` and its family, read before a delete or purge removes them. */
  removing(uid: string): Promise<string[]>;
  /** The paths an update of the resource at `context`/`path` (UID `uid`) makes stale: its mutable URLs. */
  updated(row: { uid: string; context: string; path: string }): string[];
}

const stale = new WeakMap<object, readonly string[]>();

/** Leaves `paths` for the runtime to evict once the request of `execution` (its context) is answered. */
export function markStale(execution: object, paths: readonly string[]): void {
  if (paths.length > 0) stale.set(execution, paths);
}

/** The paths the change of the request of `execution` made stale, once; else undefined. */
export function takeStale(execution: unknown): readonly string[] | undefined {
  if (typeof execution !== "object" || execution === null) return undefined;
  const paths = stale.get(execution);
  stale.delete(execution);
  return paths;
}
