/**
 * Statements whose SQL text drizzle builds once, with named placeholders, instead of on every call.
 *
 * Building a query through drizzle's builders costs 60–170 µs of CPU per statement (its `is` checks
 * walk every chunk of every column), and every create runs five: ≈ 6.5 % of an ingest's main thread
 * (bench ingest profile, Node 20). A prebuilt statement binds its values into the finished text, one
 * parameter per `?`: 15–25 µs, and a loop of creates went from 1.9–2.0 to 0.84–0.94 ms of CPU per
 * create. The text is byte for byte the builder's, so the query plans, the prepared-statement cache
 * and D1 see the same statement.
 */
import { is, Param, Placeholder, SQL, sql, StringChunk } from "drizzle-orm";
import type { SQLiteRaw } from "drizzle-orm/sqlite-core/query-builders/raw";
import type { AnySQLiteDatabase } from "./store-types.js";

/** `T` with every field open to a placeholder: the shape a prebuilt statement is built from. */
export type Bindable<T> = { [K in keyof T]: T[K] | Placeholder };

/** A placeholder per key, named after it (plus `suffix`: several rows of one statement need distinct names). */
export function placeholders<T>(keys: readonly (keyof T & string)[], suffix = ""): Bindable<T> {
  return Object.fromEntries(keys.map((k) => [k, sql.placeholder(`${k}${suffix}`)])) as Bindable<T>;
}

/**
 * A query built once (`toSQL`), and a function from placeholder values to the bound statement as a
 * `db.run(…)` item: awaited alone, or put into `db.batch([...])`.
 */
export function prebuilt<V extends Record<string, unknown>>(
  db: AnySQLiteDatabase,
  query: { toSQL(): { sql: string; params: unknown[] } },
): (values: V) => SQLiteRaw<unknown> {
  const { sql: text, params } = query.toSQL();
  const gaps = text.split("?");
  // drizzle's SQLite dialect writes every parameter as `?` and no value into the text; a `?` inside
  // a literal would shift the values, so it is refused where it would be built (at start-up).
  if (gaps.length !== params.length + 1) {
    throw new Error(`prebuilt statement has ${params.length} parameters but ${gaps.length - 1} "?": ${text}`);
  }
  const between = gaps.map((g) => new StringChunk(g));
  // drizzle's D1 batch binds a query's values to the D1 statement its prepared queries carry as
  // `stmt`, which a raw query lacks (drizzle-orm 0.45.4, d1/session.js `batch`): it is given one,
  // prepared once here. Only D1's client has `prepare`; libSQL's batch takes the text and values.
  const client = (db as { $client?: { prepare?: (sql: string) => unknown } }).$client;
  const d1Statement = typeof client?.prepare === "function" ? client.prepare(text) : undefined;
  // How each parameter gets its value, worked out once (as drizzle's fillPlaceholders does per call):
  // a named placeholder, through its column's encoder when the builder gave it one, or a constant.
  const binders = params.map((param): ((values: V) => unknown) => {
    const named = is(param, Placeholder) ? { name: param.name, encode: (v: unknown) => v } : null;
    const encoded =
      is(param, Param) && is(param.value, Placeholder)
        ? { name: param.value.name, encode: (v: unknown) => param.encoder.mapToDriverValue(v) }
        : null;
    const binder = named ?? encoded;
    if (!binder) return () => param;
    const { name, encode } = binder;
    return (values) => {
      if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`);
      return encode(values[name]);
    };
  });
  return (values) => {
    const chunks: unknown[] = [between[0]];
    for (let i = 0; i < binders.length; i++) {
      const value = (binders[i] as (values: V) => unknown)(values);
      // A string, number or null goes in bare: drizzle's checks pass over a primitive at once. Anything
      // else as a Param: drizzle would expand a bare array and drop a bare undefined (shifting the rest).
      chunks.push(isPrimitive(value) ? value : sql.param(value), between[i + 1]);
    }
    const item = db.run(new SQL(chunks as SQL["queryChunks"]));
    return d1Statement ? Object.assign(item, { stmt: d1Statement }) : item;
  };
}

const isPrimitive = (value: unknown) =>
  value === null ||
  typeof value === "string" ||
  typeof value === "number" ||
  typeof value === "bigint" ||
  typeof value === "boolean";
