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
export function createJsonLogger(write: (line: string) => void, level: LogLevel = "info", now = () => new Date(), base?: LogFields): Logger {
  const emit = (at: Exclude<LogLevel, "silent">) => (msg: string, fields?: LogFields) => {
    if (RANK[at] < RANK[level]) return;
    const record = base ? { time: now().toISOString(), level: at, msg, ...base, ...fields } : { time: now().toISOString(), level: at, msg, ...fields };
    // A replacer function makes JSON.stringify several times slower; only objects can hold errors,
    // and the access-log line (one per request) has none.
    write(fields && Object.values(fields).some(isObject) ? JSON.stringify(record, errorReplacer) : JSON.stringify(record));
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

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
