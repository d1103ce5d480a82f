/**
 * A process-local cache of getData rows for a remote database (sqld, Turso; with a `file:` database
 * runtime/host/prepared-lookup.ts has its own, dropped on every commit). Without it, every getData
 * was a network round trip to the database.
 *
 * Coherence rule:
 * - A found row is served from memory for at most `ttlMs` after the lookup that fetched it began
 *   (CMS_ROW_CACHE_TTL_MS): another instance's update or delete is seen here at most `ttlMs` after
 *   it committed (plus a read replica's lag when reads go to one).
 * - This instance's own writes (update, delete, purge, lock) drop the resource's rows — its own and
 *   its package files' — before and after the statement, and a lookup that was in flight across a
 *   write is not cached (a generation count), so a client that waited for its write never reads
 *   what it replaced through this instance.
 * - Misses are never cached: a resource created on another instance is found at once.
 * - Content-versioned URLs (issue 28's `?v=<sha256 prefix>`): a row whose sha256 starts with the
 *   version asked for cannot be stale in content, so it is served up to `versionedTtlMs` (only a
 *   delete elsewhere can make it wrong: that is the bound for those URLs). The hook is the
 *   `version` argument of findByUri/findByUriNow.
 */
import { LRUCache } from "lru-cache";
import type { MetadataStore } from "./metadata-store.js";
import type { ResourceRow } from "./schema.js";

export interface RowCacheOptions {
  /** Most rows kept, least recently used evicted first. */
  rows: number;
  /** How long a row is served without asking the database again (ms). */
  ttlMs: number;
  /** The same for a lookup that names the content's version (`?v=`): a sha256 prefix. */
  versionedTtlMs?: number;
  /** Monotonic milliseconds; tests move it. */
  now?: () => number;
}

interface Entry {
  row: ResourceRow;
  /** When the lookup that fetched it began. */
  fetchedAt: number;
}

/** A delete on another instance stays invisible to a versioned URL for at most this long. */
export const DEFAULT_VERSIONED_TTL_MS = 60_000;

/** The lowercase hex prefix of a content version; shorter than 8 digits names no version. */
const matchesVersion = (row: ResourceRow, version: string | undefined) =>
  version !== undefined && version.length >= 8 && row.sha256.startsWith(version.toLowerCase());

/** A store whose getData lookups are cached, with the counts the metrics read when scraped. */
export type RowCachedStore = MetadataStore & { rowCacheStats(): { hits: number; misses: number } };

export function withRowCache(store: MetadataStore, options: RowCacheOptions): RowCachedStore {
  const { ttlMs, versionedTtlMs = DEFAULT_VERSIONED_TTL_MS } = options;
  const now = options.now ?? (() => performance.now());
  const rows = new LRUCache<string, Entry>({ max: options.rows });
  /** Bumped by every own write: a lookup begun under an older generation is not cached. */
  let generation = 0;
  /** Lookups under way, by key: at most one per row at a time (64 connections on a row that expired). */
  const inFlight = new Map<string, { generation: number; row: Promise<ResourceRow | null> }>();
  const keyOf = (context: string, path: string) => `${context}\n${path}`;
  let hits = 0;
  let misses = 0;

  /** Drops every cached row of the resource `uid`: its own, and its package's files (same context). */
  const forget = (uid: string) => {
    generation++;
    for (const [key, { row }] of rows.entries())
      if (row.uid === uid || row.context === uid || row.parentUid === uid) rows.delete(key);
  };
  /** Runs an own write of `uid` with its rows forgotten on both sides of it. */
  const writing =
    <A extends unknown[], R>(uidOf: (...args: A) => string, write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const uid = uidOf(...args);
      forget(uid);
      try {
        return await write(...args);
      } finally {
        forget(uid);
      }
    };

  const fresh = (context: string, path: string, version?: string): ResourceRow | undefined => {
    const entry = rows.get(keyOf(context, path));
    if (!entry) return undefined;
    const age = now() - entry.fetchedAt;
    if (age < ttlMs || (age < versionedTtlMs && matchesVersion(entry.row, version))) return entry.row;
    return undefined;
  };

  return {
    ...store,
    findByUri(context, path, version) {
      const cached = fresh(context, path, version);
      if (cached) {
        hits++;
        return Promise.resolve(cached);
      }
      misses++;
      const key = keyOf(context, path);
      // Requests for a row that just expired share one lookup, unless it began before an own write.
      const joined = inFlight.get(key);
      if (joined && joined.generation === generation) return joined.row;
      const began = { at: now(), generation };
      const row = store.findByUri(context, path, version).then((found) => {
        if (found && began.generation === generation) rows.set(key, { row: Object.freeze(found), fetchedAt: began.at });
        return found;
      });
      const lookup = { generation: began.generation, row };
      inFlight.set(key, lookup);
      const settled = () => {
        if (inFlight.get(key) === lookup) inFlight.delete(key);
      };
      row.then(settled, settled);
      return row;
    },
    // Answered in the same call only from memory; undefined sends the caller to findByUri.
    findByUriNow(context, path, version) {
      const row = fresh(context, path, version);
      if (row) hits++; // a miss here goes on to findByUri, which counts it
      return row;
    },
    update: writing((change) => change.uid, store.update),
    softDelete: writing((change) => change.uid, store.softDelete),
    purge: writing((uid) => uid, store.purge),
    locks: { ...store.locks, acquire: writing((lock) => lock.name, store.locks.acquire) },
    rowCacheStats: () => ({ hits, misses }),
  };
}
