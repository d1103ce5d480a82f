/**
 * Node/Bun fast path for getData's row lookup on a local libSQL file: one statement (metadata/uri-lookup.ts) prepared once
 * on a synchronous `libsql` connection (through @libsql/client every call re-prepares the SQL and
 * re-reads its column list), and a bounded cache of the rows it found.
 *
 * Coherence: under load a SQLite read costs ~30 µs here even prepared (locks on the WAL index,
 * cold CPU caches), as much as the rest of a small-file answer. So rows are cached, and the cache
 * is dropped whenever `PRAGMA data_version` moves — which it does for every commit by any other
 * connection, this process's own writer included, and other processes sharing the file. The
 * version is read once per event-loop turn: a request sees every write committed before its turn
 * began, so a client that waited for a write's response never reads what it replaced.
 */
import Database from "libsql";
import { LRUCache } from "lru-cache";
import type { MetadataStore } from "../../metadata/metadata-store.js";
import type { ResourceRow } from "../../metadata/schema.js";
import { toResourceRow, URI_LOOKUP_SQL } from "../../metadata/uri-lookup.js";

/** Rows kept (URIs looked up, found or not), least recently used evicted first. */
const MAX_CACHED_ROWS = 10_000;
const NOT_FOUND = Symbol("not found");

export function withPreparedUriLookup(store: MetadataStore, databaseFile: string): MetadataStore & { close(): void } {
  const db = new Database(databaseFile);
  const select = db.prepare(URI_LOOKUP_SQL);
  select.raw(true);
  const dataVersion = db.prepare("PRAGMA data_version");
  dataVersion.raw(true);

  // lru-cache keeps no `null`/`undefined` values, so a missing row is cached as NOT_FOUND.
  const rows = new LRUCache<string, ResourceRow | typeof NOT_FOUND>({ max: MAX_CACHED_ROWS });
  let version: unknown;
  let checkedThisTurn = false;
  const nextTurn = () => {
    checkedThisTurn = false;
  };
  /** Drops the cache if anything was committed since the last check (at most once per turn). */
  function revalidate() {
    if (checkedThisTurn) return;
    checkedThisTurn = true;
    setImmediate(nextTurn);
    const current = (dataVersion.get() as unknown[])[0];
    if (current !== version) {
      rows.clear();
      version = current;
    }
  }

  return {
    ...store,
    async findByUri(context, path) {
      revalidate();
      const key = `${context}\n${path}`;
      const cached = rows.get(key);
      if (cached !== undefined) return cached === NOT_FOUND ? null : cached;
      const values = select.get(context, path) as unknown[] | undefined;
      const row = values ? toResourceRow(values) : null;
      rows.set(key, row ?? NOT_FOUND);
      return row;
    },
    close: () => db.close(),
  };
}
