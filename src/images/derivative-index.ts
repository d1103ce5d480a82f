/**
 * Keeps the derivative cache under its byte bound (CMS_IMAGE_CACHE_BYTES), least recently used
 * first, across restarts and instances: each derivative's size and last use are recorded in the
 * database (metadata/derivative-store.ts). A use is written when a derivative is made, then at most
 * once per `touchEveryMs` per derivative (this process remembers what it wrote), so a repeat read
 * costs no write. Past the bound the oldest are deleted from the blob store and forgotten: after
 * each new derivative, and by the blob collector's passes (a restarted instance with a smaller
 * bound included). Derivatives are only a cache: deleting one another request is reading is
 * harmless (the driver's stream holds its bytes; the next request makes it again).
 *
 * It also remembers, in memory, what each derivative this process saw stored holds (size, SHA-256),
 * so a repeat request finds it with no head() and no query (`known`): forgotten when this process
 * evicts or purges it, and when a read finds its blob gone (another instance evicted it: `gone`).
 */
import { LRUCache } from "lru-cache";
import type { Logger } from "../lib/logger.js";
import type { DerivativeStore } from "../metadata/derivative-store.js";
import type { BlobInfo, BlobKey, BlobStore } from "../storage/blob-store.js";

/** How stale a recorded last use may get: LRU order is kept to this grain. */
export const TOUCH_EVERY_MS = 60_000;
/** Remembered writes past this many are dropped (they only cost a write more). */
const REMEMBERED = 10_000;
/** Derivatives read from the index per step of an eviction. */
const BATCH = 100;
/** Stored derivatives whose facts are remembered (≈ 200 B each), least recently asked for dropped first. */
const KNOWN = 10_000;

export interface DerivativeIndex {
  /** `key` (of `size` bytes) was just read, or (`made`) stored: recorded, then the cache trimmed. */
  used(key: BlobKey, size: number, made: boolean): void;
  /** Deletes the least recently used past the bound; how many. `keep`: a key never deleted now. */
  evict(keep?: string): Promise<number>;
  /** What the blob store held at `key` when this process last found or stored it; undefined: ask it. */
  known(key: BlobKey): BlobInfo | undefined;
  /** `key` was found (or stored) holding `info`. */
  remember(key: BlobKey, info: BlobInfo): void;
  /** A read of `key` found no blob of the remembered size (another instance evicted it): forgotten. */
  gone(key: BlobKey): void;
  /** A purged source's derivatives, all under `prefix` (deleted by the caller): forgotten here and in the database. */
  forgetUnder(prefix: string): Promise<void>;
}

export function createDerivativeIndex({
  blobs,
  store,
  maxBytes,
  now,
  logger,
  touchEveryMs = TOUCH_EVERY_MS,
}: {
  blobs: BlobStore;
  store: DerivativeStore;
  maxBytes: number;
  now: () => number;
  logger?: Logger;
  touchEveryMs?: number;
}): DerivativeIndex {
  const written = new Map<string, number>();
  const facts = new LRUCache<string, BlobInfo>({ max: KNOWN });
  // Evictions run one after another: one that shared a running pass left the bytes recorded after
  // that pass read its total (510 KB against 300 KB seen). A caller joins the pass not yet started
  // (it reads the total later, theirs included), else queues the next; the kept keys gather.
  let tail: Promise<unknown> = Promise.resolve();
  let queued: Promise<number> | undefined;
  const keeps = new Set<string>();

  const evictOnce = async (keep: ReadonlySet<string>): Promise<number> => {
    let total = await store.totalBytes();
    let evicted = 0;
    while (total > maxBytes) {
      const oldest = (await store.oldest(BATCH + keep.size)).filter((d) => !keep.has(d.key));
      if (oldest.length === 0) break;
      const gone: string[] = [];
      for (const { key, size } of oldest) {
        if (total <= maxBytes) break;
        facts.delete(key); // before the delete: a request from now on asks the blob store
        await blobs.delete(key as BlobKey);
        gone.push(key);
        written.delete(key);
        total -= size;
      }
      await store.forget(gone);
      evicted += gone.length;
    }
    return evicted;
  };

  const evict = (keep?: string): Promise<number> => {
    if (keep !== undefined) keeps.add(keep);
    queued ??= tail.then(() => {
      queued = undefined;
      const kept = new Set(keeps);
      keeps.clear();
      return evictOnce(kept);
    });
    const pass = queued;
    tail = pass.catch(() => 0);
    return pass;
  };

  const warn = (err: unknown) => logger?.warn("image derivative cache bookkeeping failed", { error: err });

  return {
    used(key, size, made) {
      const at = now();
      const last = written.get(key);
      if (!made && last !== undefined && at - last < touchEveryMs) return;
      if (written.size >= REMEMBERED) written.clear();
      written.set(key, at);
      // Off the request's path: the answer never waits for the cache's bookkeeping.
      void store
        .used(key, size, at)
        .then(() => (made ? evict(key) : 0))
        .catch(warn);
    },
    evict,
    known: (key) => facts.get(key),
    remember(key, info) {
      facts.set(key, { size: info.size, sha256: info.sha256 });
    },
    gone(key) {
      facts.delete(key);
    },
    async forgetUnder(prefix) {
      for (const key of [...facts.keys()].filter((k) => k.startsWith(prefix))) facts.delete(key);
      await store.forgetUnder(prefix);
    },
  };
}
