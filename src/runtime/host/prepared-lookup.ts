/**
 * Node/Bun fast path for getData's row lookup on a local libSQL file: one statement (metadata/uri-lookup.ts) prepared once
 * on a synchronous `libsql` read connection (through @libsql/client every call re-prepares the SQL and
 * re-reads its column list), and a bounded cache of the rows it found (CMS_ROW_CACHE_ROWS; 0 = off).
 *
 * Uncached lookups: each autocommit read took two fcntl locks and an fstat besides its page reads,
 * so in WAL mode the read connection holds one read transaction per event-loop turn: the locks are
 * taken once per turn, not once per lookup (server CPU per uncached getData at 1M rows 58 → 54 µs,
 * bench scale). (Mapping the file with PRAGMA mmap_size removed the page reads but measured no gain,
 * and showed the whole file in RSS.)
 *
 * Coherence: a lookup sees what was committed before its turn's first lookup began; the cache is
 * dropped whenever a commit by any connection — this process's own writer and other processes
 * sharing the file included — is seen, checked once per turn (commit-signal.ts). A write's response
 * is sent turns after its commit (durable-commits.ts waits for the WAL fsync in the thread pool), so
 * a client that waited for it never reads what it replaced.
 */
import Database from "libsql";
import { LRUCache } from "lru-cache";
import type { DatabaseHealth } from "../../metadata/database-health.js";
import type { MetadataStore } from "../../metadata/metadata-store.js";
import type { ResourceRow } from "../../metadata/schema.js";
import { toResourceRow, URI_LOOKUP_SQL } from "../../metadata/uri-lookup.js";
import { commitSignal } from "./commit-signal.js";

const NOT_FOUND = Symbol("not found");

/** Calls `fn` at most once per event-loop turn: the first time it is asked to. */
function oncePerTurn(fn: () => void): () => void {
  let done = false;
  const reset = () => {
    done = false;
  };
  return () => {
    if (done) return;
    done = true;
    setImmediate(reset);
    fn();
  };
}

/** The read connection: every read of one turn in one WAL snapshot (locks taken once per turn). */
function openReadConnection(databaseFile: string, health?: DatabaseHealth) {
  const db = new Database(databaseFile);
  // Outside WAL, a held read lock would make this process's own writer's COMMIT fail with SQLITE_BUSY.
  const wal = String((db.prepare("PRAGMA journal_mode").raw(true).get() as unknown[])[0]).toLowerCase() === "wal";
  const begin = db.prepare("BEGIN");
  const commit = db.prepare("COMMIT");
  let closed = false;
  // Also runs after close (a turn's last callback): libsql must not be touched then.
  const endSnapshot = () => {
    if (!closed && db.inTransaction) commit.run();
  };
  const snapshot = oncePerTurn(() => {
    if (db.inTransaction) return;
    begin.run();
    setImmediate(endSnapshot);
  });
  const select = db.prepare(URI_LOOKUP_SQL).raw(true);
  return {
    db,
    close() {
      closed = true;
      db.close();
    },
    lookup(context: string, path: string): ResourceRow | null {
      let values: unknown[] | undefined;
      try {
        if (wal) snapshot();
        values = select.get(context, path) as unknown[] | undefined;
      } catch (err) {
        throw health ? health.failed(err, "read") : err;
      }
      health?.succeeded("read");
      return values ? toResourceRow(values) : null;
    },
  };
}

/**
 * `cacheRows`: rows kept (URIs looked up, found or not), least recently used evicted first; 0 = none.
 * `health`: told each lookup's outcome, as the database's client tells it (metadata/database-health.ts).
 */
export function withPreparedUriLookup(
  store: MetadataStore,
  databaseFile: string,
  cacheRows: number,
  health?: DatabaseHealth,
): MetadataStore & { close(): void; rowCacheStats?(): { hits: number; misses: number } } {
  const { db, lookup, close } = openReadConnection(databaseFile, health);
  if (cacheRows === 0)
    return { ...store, findByUri: async (context, path) => lookup(context, path), findByUriNow: lookup, close };

  const commits = commitSignal(db, databaseFile);
  // lru-cache keeps no `null`/`undefined` values, so a missing row is cached as NOT_FOUND.
  const rows = new LRUCache<string, ResourceRow | typeof NOT_FOUND>({ max: cacheRows });
  /** Drops the cache if anything was committed since the last check. */
  const revalidate = oncePerTurn(() => {
    if (commits.changed()) rows.clear();
  });

  // For the metrics (runtime/host/prom-metrics.ts), read when scraped.
  let hits = 0;
  let misses = 0;
  const findByUriNow = (context: string, path: string) => {
    revalidate();
    const key = `${context}\n${path}`;
    const cached = rows.get(key);
    if (cached !== undefined) {
      hits++;
      return cached === NOT_FOUND ? null : cached;
    }
    misses++;
    const row = lookup(context, path);
    rows.set(key, row ?? NOT_FOUND);
    return row;
  };
  return {
    ...store,
    findByUri: async (context, path) => findByUriNow(context, path),
    findByUriNow,
    rowCacheStats: () => ({ hits, misses }),
    close() {
      commits.close();
      close();
    },
  };
}
