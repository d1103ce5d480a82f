/**
 * Conditions of the metadata database that are not bugs and that callers answer honestly: another
 * writer held the write lock for longer than we wait (503 + Retry-After), or the disk is full (507).
 * Raised by the database wiring (runtime/node/sqlite-file-client.ts, runtime/worker/deps.ts); rendered by http/problem-handlers.ts. Web APIs only.
 */

/** The write lock stayed taken (another process or instance is writing) for the whole allowed wait. */
export class DatabaseBusyError extends Error {
  constructor(readonly waitedMs: number, options?: { cause?: unknown }) {
    super(`the database stayed locked by another writer for ${waitedMs} ms`, options);
    this.name = "DatabaseBusyError";
  }
}

/** SQLite could not grow the database or its WAL (SQLITE_FULL: the volume is full). */
export class DatabaseFullError extends Error {
  constructor(options?: { cause?: unknown }) {
    super("the database's volume is full", options);
    this.name = "DatabaseFullError";
  }
}
