/**
 * getData's row lookup as one raw statement, for a runtime that prepares it once on a synchronous
 * connection (runtime/host/prepared-lookup.ts): the SQL and the mapping of its raw values back to
 * the row the store returns, both from drizzle's own column definitions so they cannot drift.
 */
import { getTableColumns } from "drizzle-orm";
import { type ResourceRow, resources } from "./schema.js";

const columns = Object.entries(getTableColumns(resources));

/** Parameters: context, path. Run in raw mode (values in column order); map the result with `toResourceRow`. */
export const URI_LOOKUP_SQL = `SELECT ${columns.map(([, c]) => `"${c.name}"`).join(", ")} FROM resources WHERE context = ? AND path = ? LIMIT 1`;

export function toResourceRow(values: unknown[]): ResourceRow {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) {
    const [key, column] = columns[i] as (typeof columns)[number];
    row[key] = values[i] === null ? null : column.mapFromDriverValue(values[i]);
  }
  return Object.freeze(row) as ResourceRow;
}
