// Kept over lru-cache: this cache is bounded in bytes and holds empty blobs, and lru-cache sizes must be ≥ 1.
/**
 * A bounded in-memory LRU of whole small blobs in front of another BlobStore. Serving a hot 4 KiB
 * blob from the fs driver costs an open, fstat, header read, content read and close per request;
 * from here it costs a Map lookup and one copy. Web APIs only, so it wraps any driver on any runtime.
 *
 * Coherence: every write through this store (put, putContentAddressed, delete) invalidates its key,
 * and a fill that raced a write is dropped rather than cached. Content-addressed keys are immutable,
 * so for them the cache is always coherent, even with other processes writing the same volume. A
 * key overwritten or deleted by *another* process is only noticed when it is evicted; the app only
 * serves content-addressed keys.
 */
import type { BlobInfo, BlobKey, BlobObject, BlobStore, ByteRange, PutOptions } from "../blob-store.js";
import { checkRange } from "./utils/driver-kit.js";

export interface CachedBlobStoreOptions {
  /** Total bytes of content held (entries are evicted least recently used first). */
  maxBytes: number;
  /** Blobs larger than this are never cached and pass straight through. */
  maxEntryBytes: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

export interface CachedBlobStore extends BlobStore {
  readonly inner: BlobStore;
  stats(): CacheStats;
  /** Drops every entry. */
  clear(): void;
  /**
   * Resolves once no whole-blob read is in flight: the background fills a range read or an open
   * file starts, including those a write has orphaned (their result is dropped). Tests await it.
   */
  idle(): Promise<void>;
}

interface Entry extends BlobInfo {
  bytes: Uint8Array<ArrayBuffer>;
}

const noop = () => {};

/** One copied chunk: consumers may scribble on what they read without touching the cache. */
function bytesStream(bytes: Uint8Array, start: number, end: number): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (!sent && end > start) controller.enqueue(bytes.slice(start, end));
        sent = true;
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Reads a whole (small) body; null if it did not have exactly `size` bytes (then nothing is cached). */
async function readExactly(body: ReadableStream<Uint8Array>, size: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const out = new Uint8Array(size);
  let offset = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (offset + value.byteLength > size) {
      await reader.cancel().catch(noop);
      return null;
    }
    out.set(value, offset);
    offset += value.byteLength;
  }
  return offset === size ? out : null;
}

/** Keys of blobs found too large to cache, so their reads skip the fill machinery (bounded). */
const MAX_UNCACHEABLE_KEYS = 10_000;

interface Fill {
  /** Identifies this fill; a write to the key removes it, and then its result is not cached. */
  token: object;
  /** The whole blob, or null if it is missing, too large, or could not be read. Never rejects. */
  promise: Promise<Entry | null>;
}

export function createCachedBlobStore(inner: BlobStore, options: CachedBlobStoreOptions): CachedBlobStore {
  const { maxBytes, maxEntryBytes } = options;
  if (!(maxBytes >= 0) || !(maxEntryBytes >= 0)) throw new RangeError("maxBytes and maxEntryBytes must be ≥ 0");
  // Map iteration order is insertion order: re-inserting on a hit makes the first key the LRU one.
  const entries = new Map<BlobKey, Entry>();
  /** Whole-blob reads in flight, by key: concurrent misses wait for one instead of each reading. */
  const fills = new Map<BlobKey, Fill>();
  const uncacheable = new Set<BlobKey>();
  /** Every fill not yet settled, orphaned ones too (`fills` forgets those): what `idle` awaits. */
  const running = new Set<Promise<unknown>>();
  let bytes = 0;
  let hits = 0;
  let misses = 0;

  const cacheable = (size: number) => size <= maxEntryBytes && size <= maxBytes;

  function markUncacheable(key: BlobKey) {
    if (uncacheable.size >= MAX_UNCACHEABLE_KEYS) uncacheable.clear();
    uncacheable.add(key);
  }

  function invalidate(key: BlobKey) {
    fills.delete(key);
    uncacheable.delete(key);
    const entry = entries.get(key);
    if (entry) {
      entries.delete(key);
      bytes -= entry.size;
    }
  }

  /** Caches `entry` unless a write to the key happened since `token`'s fill started. */
  function insert(key: BlobKey, token: object, entry: Entry) {
    if (fills.get(key)?.token !== token) return;
    const old = entries.get(key);
    if (old) bytes -= old.size;
    entries.delete(key);
    entries.set(key, entry);
    bytes += entry.size;
    for (const [oldest, evicted] of entries) {
      if (bytes <= maxBytes) break;
      entries.delete(oldest);
      bytes -= evicted.size;
    }
  }

  /**
   * Registers a fill for `key` and runs `read` (which resolves to the whole blob, or null);
   * caches its result if no write intervened. The returned fill is already in `fills`.
   */
  function startFill(key: BlobKey, read: () => Promise<Entry | null>): Fill {
    const token = {};
    const promise = read().then(
      (entry) => {
        if (entry) insert(key, token, entry);
        return entry;
      },
      () => null,
    );
    const fill = { token, promise };
    fills.set(key, fill);
    running.add(promise);
    void promise.finally(() => {
      running.delete(promise);
      if (fills.get(key) === fill) fills.delete(key);
    });
    return fill;
  }

  /** Reads the whole blob from the inner store into an entry (null: missing, too large or wrong size). */
  async function readWhole(key: BlobKey): Promise<Entry | null> {
    const blob = await inner.get(key);
    if (!blob) return null;
    if (!cacheable(blob.size)) {
      markUncacheable(key);
      await blob.body.cancel().catch(noop);
      return null;
    }
    const content = await readExactly(blob.body, blob.size);
    return content ? { size: blob.size, sha256: blob.sha256, bytes: content } : null;
  }

  /**
   * After a partial read (a range, or an open file) of a blob of `size` bytes from the inner store:
   * caches the whole blob in the background if it fits, so later reads come from memory.
   */
  function warm(key: BlobKey, size: number) {
    if (!cacheable(size)) markUncacheable(key);
    else if (!entries.has(key) && !fills.has(key)) startFill(key, () => readWhole(key));
  }

  function touch(key: BlobKey, entry: Entry) {
    hits += 1;
    entries.delete(key); // most recently used goes last
    entries.set(key, entry);
  }

  function serve(entry: Entry, range?: ByteRange): BlobObject {
    if (range) checkRange(range, entry.size);
    const start = range?.start ?? 0;
    const end = range ? range.end + 1 : entry.size;
    // `bytes` is a view, not a copy: response bodies only read it (the stream hands out copies).
    // The stream is made on first use: most callers answer with `bytes` and never read it.
    let body: ReadableStream<Uint8Array> | undefined;
    return {
      size: entry.size,
      sha256: entry.sha256,
      bytes: entry.bytes.subarray(start, end),
      get body() {
        body ??= bytesStream(entry.bytes, start, end);
        return body;
      },
    };
  }

  /** Runs a write, invalidating `key` before and after it (also when it fails). */
  async function writing<T>(
    key: BlobKey | undefined,
    write: () => Promise<T>,
    keyOf?: (result: T) => BlobKey,
  ): Promise<T> {
    if (key !== undefined) invalidate(key);
    try {
      const result = await write();
      if (keyOf) invalidate(keyOf(result));
      return result;
    } finally {
      if (key !== undefined) invalidate(key);
    }
  }

  return {
    driver: inner.driver,
    inner,

    put: (key: BlobKey, body: ReadableStream<Uint8Array>, putOptions?: PutOptions) =>
      writing(key, () => inner.put(key, body, putOptions)),

    putContentAddressed: (body, keyFor, putOptions) =>
      writing(
        undefined,
        () => inner.putContentAddressed(body, keyFor, putOptions),
        (result) => result.key,
      ),

    delete: (key) => writing(key, () => inner.delete(key)),

    async get(key: BlobKey, range?: ByteRange): Promise<BlobObject | null> {
      const entry = entries.get(key);
      if (entry) {
        const served = serve(entry, range);
        touch(key, entry);
        return served;
      }
      misses += 1;
      if (uncacheable.has(key)) return inner.get(key, range);
      const pending = fills.get(key);
      if (pending) {
        // Someone is already reading this blob whole: wait for it rather than read it again.
        const filled = await pending.promise;
        return filled ? serve(filled, range) : inner.get(key, range);
      }
      if (range) {
        // Only part is wanted: answer from the inner store, and cache the whole blob in the background.
        const blob = await inner.get(key, range);
        if (blob) warm(key, blob.size);
        return blob;
      }
      // The whole blob is wanted: read it once (concurrent misses wait on this fill) and cache it.
      let passThrough: BlobObject | null = null;
      const fill = startFill(key, async () => {
        const blob = await inner.get(key);
        if (!blob) return null;
        if (!cacheable(blob.size)) {
          markUncacheable(key);
          passThrough = blob; // too large: stream it to this caller as it is
          return null;
        }
        const content = await readExactly(blob.body, blob.size);
        if (!content) throw new Error("blob size mismatch"); // not cached; re-read below
        return { size: blob.size, sha256: blob.sha256, bytes: content };
      });
      const filled = await fill.promise;
      if (filled) return serve(filled);
      return passThrough ?? inner.get(key);
    },

    // Bound, so callers can detect the capability by its presence (only drivers that have one).
    localFile: inner.localFile?.bind(inner),

    peek(key: BlobKey) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      touch(key, entry);
      return entry.bytes;
    },

    async head(key: BlobKey): Promise<BlobInfo | null> {
      const entry = entries.get(key);
      return entry ? { size: entry.size, sha256: entry.sha256 } : inner.head(key);
    },

    // Passed through (the memory copy is for `get` and `peek`), warming the cache like a range read.
    ...(inner.openFile && {
      async openFile(key: BlobKey) {
        const file = (await inner.openFile?.(key)) ?? null;
        if (file && !uncacheable.has(key)) warm(key, file.size);
        return file;
      },
    }),

    list: (prefix) => inner.list(prefix),
    check: () => inner.check(),
    probe: () => inner.probe(),
    owner: () => inner.owner(),
    claimOwner: (id: string) => inner.claimOwner(id),

    stats: () => ({ hits, misses, entries: entries.size, bytes }),
    clear() {
      entries.clear();
      fills.clear();
      uncacheable.clear();
      bytes = 0;
    },
    async idle() {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
