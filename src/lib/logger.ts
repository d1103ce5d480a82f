/** Structured JSON logging: one object per line, so log shippers need no parsing rules. */

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/**
 * `write` receives one complete JSON line (no trailing newline). `base` fields go on every line
 * (e.g. which worker process wrote it).
 */
export function createJsonLogger(write: (line: string) => void, level: LogLevel = "info", now?: () => Date, base?: LogFields): Logger {
  const emit = (at: Exclude<LogLevel, "silent">) => (msg: string, fields?: LogFields) => {
    if (RANK[at] < RANK[level]) return;
    const time = now ? now().toISOString() : isoNow();
    if (!base) {
      const line = flatLine(time, at, msg, fields);
      if (line !== undefined) return write(line);
    }
    const record = base ? { time, level: at, msg, ...base, ...fields } : { time, level: at, msg, ...fields };
    // A replacer function makes JSON.stringify several times slower; only objects can hold errors.
    write(fields && Object.values(fields).some(isObject) ? JSON.stringify(record, errorReplacer) : JSON.stringify(record));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

let isoMs = Number.NaN;
let iso = "";
/**
 * The current time as an ISO string, formatted once per millisecond: a Date and its toISOString for
 * every access-log line cost ≈ 3 µs per request under load (bench/NOTES.md, fourth pass: small files).
 */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    iso = new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
}

const RESERVED = new Set(["time", "level", "msg"]);
const quotedKeys = new Map<string, string>();
const startsWithDigit = (key: string) => key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57;

/**
 * The line JSON.stringify gives for `{ time, level, msg, ...fields }`, written field by field, when
 * every value is a string, number, boolean or undefined (skipped, as JSON.stringify does) and no
 * field renames the first three or may be an integer key (an object lists those first); undefined otherwise. The record object, its spread and the generic
 * stringify of it were the access log's cost: one line per request, ≈ 9 µs of a 4 KiB getData's
 * ≈ 40 µs on Node (bench/NOTES.md, fourth pass: small files).
 */
function flatLine(time: string, level: string, msg: string, fields: LogFields | undefined): string | undefined {
  let line = `{"time":"${time}","level":"${level}","msg":${jsonString(msg)}`;
  if (fields) for (const key of Object.keys(fields)) {
    const value = fields[key];
    const type = typeof value;
    if (type === "undefined") continue;
    if ((type !== "string" && type !== "number" && type !== "boolean") || RESERVED.has(key) || startsWithDigit(key)) return undefined;
    let quoted = quotedKeys.get(key);
    if (quoted === undefined) {
      quoted = `,${JSON.stringify(key)}:`;
      if (quotedKeys.size < 1024) quotedKeys.set(key, quoted); // field names are the code's, not input
    }
    line += quoted + (type === "string" ? jsonString(value as string) : type === "number" ? jsonNumber(value as number) : value ? "true" : "false");
  }
  return `${line}}`;
}

/** What JSON.stringify must escape: quote, backslash, control characters; surrogates (a lone one is escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/**
 * JSON.stringify of a string, without calling it for the common string that needs no escape: one
 * call per field was most of a line's cost on Bun (15 % of a 4 KiB getData's profile; bench/NOTES.md).
 */
const jsonString = (value: string) => (NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`);
/** JSON.stringify of a number: its shortest round-trip text, or null when it is not finite. */
const jsonNumber = (value: number) => (Number.isFinite(value) ? String(value) : "null");

const isObject = (value: unknown) => typeof value === "object" && value !== null;

/** Errors serialise to name/message/code/stack (logs only — never sent to clients). */
function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) {
    const { name, message, stack } = value;
    const code = (value as { code?: unknown }).code;
    return { name, message, ...(code ? { code } : {}), stack, ...(value.cause ? { cause: value.cause } : {}) };
  }
  return value;
}

export const silentLogger: Logger = createJsonLogger(() => {}, "silent");
