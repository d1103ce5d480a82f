/**
 * A small LRU of open blob files, kept between requests so a hot blob costs one positional read
 * per request instead of open, fstat, header read, read and close (random 64 KiB ranges of a video:
 * with send-file.ts, 0.36–0.41× → ≈ 1.0× of a bare node:http range stream). Bounded by count; a
 * file idle for `idleMs` is closed, so a blob deleted by another process holds its disk space only
 * that long. Writers in this process call `forget` so a replaced or deleted file is not served
 * again. Runtime-neutral: the handle only needs `close()`.
 */

export interface OpenFilesOptions {
  /** Most files kept open while unused (files in use are never closed under their readers). */
  max: number;
  /** An unused file is closed after this long (checked every third of it: closed within 4/3 of it). */
  idleMs: number;
}

export interface PooledFile<H, I> {
  handle: H;
  info: I;
  /** Hands the file back (idempotent). */
  release(): void;
}

interface Entry<H, I> {
  handle: H;
  info: I;
  users: number;
  lastUsed: number;
  /** Out of the pool: closed as soon as its last user releases it. */
  evicted: boolean;
  closed: boolean;
}

const noop = () => {};

export function createOpenFiles<H extends { close(): Promise<void> }, I>({ max, idleMs }: OpenFilesOptions) {
  // Map order is insertion order: re-inserting on use makes the first entry the least recently used.
  const entries = new Map<string, Entry<H, I>>();
  /** Opens in flight by path, so concurrent first requests share one open. */
  const opening = new Map<string, Promise<Entry<H, I> | null>>();
  let sweeper: ReturnType<typeof setInterval> | undefined;
  /** Acquired and not yet released, over all files (pooled or evicted). */
  let readers = 0;

  function close(entry: Entry<H, I>) {
    entry.closed = true;
    entry.handle.close().catch(noop);
  }

  function evict(path: string, entry: Entry<H, I>) {
    entry.evicted = true;
    if (entries.get(path) === entry) entries.delete(path);
    if (entry.users === 0) close(entry);
    if (entries.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function sweepIdle() {
    const now = Date.now();
    for (const [path, entry] of entries) if (entry.users === 0 && now - entry.lastUsed >= idleMs) evict(path, entry);
  }

  function insert(path: string, entry: Entry<H, I>) {
    entries.set(path, entry);
    for (const [oldest, old] of entries) {
      if (entries.size <= max) break;
      evict(oldest, old);
    }
    if (!sweeper) {
      sweeper = setInterval(sweepIdle, Math.max(1, Math.ceil(idleMs / 3)));
      // Never keeps the process alive (setInterval is a Timeout object on Node and Bun).
      (sweeper as { unref?: () => void }).unref?.();
    }
  }

  function use(path: string, entry: Entry<H, I>): PooledFile<H, I> {
    entry.users += 1;
    readers += 1;
    if (!entry.evicted) {
      entries.delete(path); // most recently used goes last
      entries.set(path, entry);
    }
    let released = false;
    return {
      handle: entry.handle,
      info: entry.info,
      release() {
        if (released) return;
        released = true;
        entry.users -= 1;
        readers -= 1;
        entry.lastUsed = Date.now();
        if (entry.evicted && entry.users === 0) close(entry);
      },
    };
  }

  return {
    /** The pooled file at `path`, opened with `open` when not pooled; null when `open` finds nothing. */
    async acquire(path: string, open: () => Promise<{ handle: H; info: I } | null>): Promise<PooledFile<H, I> | null> {
      for (;;) {
        const pooled = entries.get(path);
        if (pooled) return use(path, pooled);
        let pending = opening.get(path);
        if (!pending) {
          const started: Promise<Entry<H, I> | null> = open().then((opened) => {
            if (!opened) return null;
            const entry = { ...opened, users: 0, lastUsed: Date.now(), evicted: false, closed: false };
            // Forgotten while opening (a write to the path): serve this one reader, keep nothing.
            if (opening.get(path) === started) insert(path, entry);
            else entry.evicted = true;
            return entry;
          });
          pending = started;
          opening.set(path, started);
          void started.then(
            () => opening.get(path) === started && opening.delete(path),
            () => opening.get(path) === started && opening.delete(path),
          );
        }
        const entry = await pending;
        if (!entry) return null;
        // Evicted and closed between its open and this reader's turn: open again.
        if (entry.closed) continue;
        return use(path, entry);
      }
    },

    /** Drops `path` from the pool (its file was replaced or deleted); current readers keep reading. */
    forget(path: string) {
      opening.delete(path);
      const entry = entries.get(path);
      if (entry) evict(path, entry);
    },

    /** Files kept open now, and files acquired but not yet released (pooled or not). */
    stats() {
      return { pooled: entries.size, readers };
    },
  };
}
