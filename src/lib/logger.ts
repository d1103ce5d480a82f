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
 * Where a flat record's JSON line goes, piece by piece: into a string (`TextLine`), or straight into
 * a batch of bytes (runtime/host/batched-lines.ts). Building each access-log line as a string and
 * encoding it afterwards took 3.0–4.2 µs of a 4 KiB getData's ≈ 27 µs of CPU on Bun under load,
 * against 2.3–3.6 µs written piece by piece into the batch (timed around the call in the server).
 */
export interface JsonLineWriter {
  /** JSON text as it is: punctuation, quoted keys, numbers, literals. */
  raw(json: string): void;
  /** A string value, written as JSON.stringify writes it. */
  string(value: string): void;
}

/** Where log lines go: the text of each, or (`begin`) a writer for one line of at most `maxBytes` UTF-8 bytes; null when it cannot take one. */
export interface LineSink {
  line(text: string): void;
  begin?(maxBytes: number): (JsonLineWriter & { end(): void }) | null;
}

/**
 * `write` receives one complete JSON line (no trailing newline), or is a `LineSink`. `base` fields
 * go on every line (e.g. which worker process wrote it).
 */
export function createJsonLogger(
  write: ((line: string) => void) | LineSink,
  level: LogLevel = "info",
  now?: () => Date,
  base?: LogFields,
): Logger {
  const sink: LineSink = typeof write === "function" ? { line: write } : write;
  // Base fields (the instance id on every line) written once as JSON text, so lines stay on the flat path.
  const baseJson = base ? flatBase(base) : "";
  const baseBytes = new TextEncoder().encode(baseJson ?? "").length;
  const baseKeys = base ? Object.keys(base) : [];
  // A field named like a base field replaces it (the spread's order below), which the flat path cannot
  // write. Asked per base key (one: the instance), not per field: no array or closure per line.
  // Object.hasOwn first: V8 answers it in compiled code, where propertyIsEnumerable is a call into its
  // C++ runtime on every line (≈ 270 instructions of a ≈ 137 000-instruction HEAD; bench/NOTES.md, eighth pass).
  const overridesBase = (fields: LogFields) => {
    for (const key of baseKeys)
      if (Object.hasOwn(fields, key) && Object.prototype.propertyIsEnumerable.call(fields, key)) return true;
    return false;
  };
  const emit = (at: Exclude<LogLevel, "silent">) => (msg: string, fields?: LogFields) => {
    if (RANK[at] < RANK[level]) return;
    const time = now ? now().toISOString() : isoNow();
    const maxBytes =
      base && (baseJson === null || (fields !== undefined && overridesBase(fields)))
        ? -1
        : flatLineBytes(time, msg, fields);
    if (maxBytes >= 0) {
      const out = sink.begin?.(maxBytes + baseBytes);
      if (out) {
        writeFlatLine(out, time, at, msg, fields, baseJson ?? "");
        return out.end();
      }
      const text = new TextLine();
      writeFlatLine(text, time, at, msg, fields, baseJson ?? "");
      return sink.line(text.value);
    }
    const record = base ? { time, level: at, msg, ...base, ...fields } : { time, level: at, msg, ...fields };
    // A replacer function makes JSON.stringify several times slower; only objects can hold errors.
    sink.line(
      fields && Object.values(fields).some(isObject) ? JSON.stringify(record, errorReplacer) : JSON.stringify(record),
    );
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

let isoMs = Number.NaN;
let iso = "";
/**
 * The current time as an ISO string, formatted once per millisecond: a Date and its toISOString for
 * every access-log line cost ≈ 3 µs per request under load (0.5 µs in a loop; Node 20, small files).
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
const LEVEL_PARTS: Record<string, string> = Object.fromEntries(
  ["debug", "info", "warn", "error"].map((l) => [l, `","level":"${l}","msg":`]),
);
/** The longest JSON text of a number (`-1.7976931348623157e+308`) or a boolean. */
const MAX_SCALAR_BYTES = 24;

/**
 * When every field is a string, number, boolean or undefined (skipped, as JSON.stringify does) and no
 * field renames the first three or may be an integer key (an object lists those first), the line can
 * be written field by field (`writeFlatLine`): the most UTF-8 bytes it takes (a UTF-16 unit takes at
 * most 6 bytes, as `\u001f`); otherwise -1. The record object, its spread and the generic stringify
 * of it were the access log's cost: one line per request, ≈ 9 µs of a 4 KiB getData's ≈ 40 µs on Node.
 * With the time stamp cache, writing field by field took Node from 23.6k to 30.1k req/s (small files).
 */
function flatLineBytes(time: string, msg: string, fields: LogFields | undefined): number {
  let bytes = 40 + time.length + 6 * msg.length;
  if (fields)
    for (const key of Object.keys(fields)) {
      // Even an undefined field named like the first three removes them (JSON.stringify skips it).
      if (RESERVED.has(key) || startsWithDigit(key)) return -1;
      const value = fields[key];
      const type = typeof value;
      if (type === "undefined") continue;
      if (type !== "string" && type !== "number" && type !== "boolean") return -1;
      bytes += 6 * key.length + 4 + (type === "string" ? 6 * (value as string).length + 2 : MAX_SCALAR_BYTES);
    }
  return bytes;
}

/**
 * `,"key":value…` for base fields that are all strings, numbers or booleans under names `flatLineBytes`
 * accepts (JSON.stringify's text of them), else null: those lines take the generic path.
 */
function flatBase(base: LogFields): string | null {
  const keys = Object.keys(base);
  if (keys.some((key) => RESERVED.has(key) || startsWithDigit(key))) return null;
  if (!keys.every((key) => ["string", "number", "boolean", "undefined"].includes(typeof base[key]))) return null;
  const json = JSON.stringify(base);
  return json === "{}" ? "" : `,${json.slice(1, -1)}`;
}

/** The line JSON.stringify gives for `{ time, level, msg, ...base, ...fields }`, for fields `flatLineBytes` accepts. */
function writeFlatLine(
  out: JsonLineWriter,
  time: string,
  level: string,
  msg: string,
  fields: LogFields | undefined,
  baseJson: string,
): void {
  out.raw('{"time":"');
  out.raw(time);
  out.raw(LEVEL_PARTS[level] as string);
  out.string(msg);
  if (baseJson) out.raw(baseJson);
  if (fields)
    for (const key of Object.keys(fields)) {
      const value = fields[key];
      const type = typeof value;
      if (type === "undefined") continue;
      let quoted = quotedKeys.get(key);
      if (quoted === undefined) {
        quoted = `,${JSON.stringify(key)}:`;
        if (quotedKeys.size < 1024) quotedKeys.set(key, quoted); // field names are the code's, not input
      }
      out.raw(quoted);
      if (type === "string") out.string(value as string);
      else out.raw(type === "number" ? jsonNumber(value as number) : value ? "true" : "false");
    }
  out.raw("}");
}

/** A line built as a string, for sinks that take text. */
class TextLine implements JsonLineWriter {
  value = "";
  raw(json: string) {
    this.value += json;
  }
  string(value: string) {
    this.value += jsonString(value);
  }
}

/** What JSON.stringify must escape: quote, backslash, control characters; surrogates (a lone one is escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/**
 * JSON.stringify of a string, without calling it for the common string that needs no escape: one
 * call per field was most of a line's cost on Bun (15 % of a 4 KiB getData's profile); without it a
 * line takes 1.6–2.2 µs on Node (was 2.4–3.3) and 1.5–2.3 µs on Bun (was 1.7–2.5).
 */
const jsonString = (value: string) => (NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`);
/** JSON.stringify of a number: its shortest round-trip text, or null when it is not finite. */
const jsonNumber = (value: number) => (Number.isFinite(value) ? String(value) : "null");

const isObject = (value: unknown) => typeof value === "object" && value !== null;

/** Errors serialise to name/message/code/stack (logs only — never sent to clients). */
function errorReplacer(_key: string, value: unknown) {
  if (value instanceof Error) {
    const { name, code } = value as Error & { code?: unknown };
    const { message, stack } = withoutQueryParams(value);
    return { name, message, ...(code ? { code } : {}), stack, ...(value.cause ? { cause: value.cause } : {}) };
  }
  return value;
}

/**
 * A failed statement's error (drizzle's: `Failed query: <sql>\nparams: <values>`, with `query` and
 * `params` beside) without the values: they are user data, tokens, webhook secrets. The SQL and how
 * many values there were stay, and so does the database's own reason (the `cause`).
 */
function withoutQueryParams(err: Error): { message: string; stack: string | undefined } {
  const { query, params } = err as Error & { query?: unknown; params?: unknown };
  if (typeof query !== "string" || !Array.isArray(params)) return { message: err.message, stack: err.stack };
  const message = `Failed query: ${query}\nparams: [${params.length} values not logged]`;
  const stack = err.stack?.includes(err.message) ? err.stack.replace(err.message, message) : undefined;
  return { message, stack };
}

export const silentLogger: Logger = createJsonLogger(() => {}, "silent");
