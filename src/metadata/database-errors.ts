/**
 * Conditions of the metadata database that are not bugs and that callers answer honestly: another
 * writer held the write lock for longer than we wait (503 + Retry-After), the disk is full (507), or
 * the database cannot be used at all (503 + Retry-After). Raised by the database wiring
 * (runtime/host/sqlite-file-client.ts, metadata/database-health.ts); rendered by
 * http/problem-handlers.ts. Web APIs only.
 */

/** The write lock stayed taken (another process or instance is writing) for the whole allowed wait. */
export class DatabaseBusyError extends Error {
  constructor(
    readonly waitedMs: number,
    options?: { cause?: unknown },
  ) {
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

/** The database cannot be used right now (see `isDatabaseUnavailable`); the driver's error is the cause. */
export class DatabaseUnavailableError extends Error {
  constructor(options: { cause: unknown }) {
    super(`the database is unavailable: ${rootMessage(options.cause)}`, options);
    this.name = "DatabaseUnavailableError";
  }
}

/**
 * SQLite primary result codes of a file that cannot be used: SQLITE_READONLY (8: the volume refuses
 * writes), SQLITE_IOERR (10), SQLITE_CORRUPT (11), SQLITE_CANTOPEN (14), SQLITE_NOTADB (26).
 */
const UNUSABLE_SQLITE_CODES = new Set([8, 10, 11, 14, 26]);
const UNUSABLE_SQLITE_NAME = /^SQLITE_(READONLY|IOERR|CORRUPT|CANTOPEN|NOTADB)(_|$)/;
/** System and undici codes of a connection that could not be made or broke, or of a failing volume. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EIO",
  "EROFS",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);
/** workerd's fetch (and D1) when a connection fails or breaks: an Error without a code. */
const WORKERD_CONNECTION_LOST = /\bNetwork connection lost\b/;
/** @libsql/client's codes for a server it could not talk to: WebSocket failures, a closed stream, an HTTP error status. */
const UNREACHABLE_LIBSQL_CODES = new Set(["HRANA_WEBSOCKET_ERROR", "HRANA_CLOSED_ERROR", "SERVER_ERROR"]);

/**
 * The one place that tells a database that cannot be used (server down or failing, connection
 * refused or broken, file unreadable, unwritable or no database) from any other failure of a
 * statement (a constraint, a bug): looks through the cause chain, since clients wrap what failed.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const { code, rawCode } = e as { code?: unknown; rawCode?: unknown };
    if (typeof rawCode === "number" && UNUSABLE_SQLITE_CODES.has(rawCode & 0xff)) return true;
    if (WORKERD_CONNECTION_LOST.test(e.message)) return true;
    if (typeof code !== "string") continue;
    if (UNUSABLE_SQLITE_NAME.test(code) || UNREACHABLE_CODES.has(code)) return true;
    if (UNREACHABLE_LIBSQL_CODES.has(code)) {
      // SERVER_ERROR carries sqld's (or a proxy's) HTTP status: a 4xx is a bad token or URL, not an outage.
      const status = (e.cause as { status?: unknown } | undefined)?.status;
      return !(typeof status === "number" && status < 500);
    }
  }
  return false;
}

/** The DatabaseUnavailableError in `err`'s cause chain (query builders wrap it), or null. */
export function unavailableCause(err: unknown): DatabaseUnavailableError | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return e;
  }
  return null;
}

/** The innermost message of a cause chain: what actually failed ("connect ECONNREFUSED …", "disk I/O error"). */
export function rootMessage(err: unknown): string {
  let e = err;
  for (let depth = 0; e instanceof Error && e.cause instanceof Error && depth < 8; depth++) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
