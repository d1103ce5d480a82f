/**
 * Node/Bun fast path for getData's row lookup on a local libSQL file: one statement prepared once
 * on a synchronous `libsql` connection. Through @libsql/client every call re-prepares the SQL and
 * re-reads its column list, which the CPU profile of small-file serving showed as its largest cost.
 * WAL mode lets this second connection see every committed write of the main one.
 */
import { getTableColumns } from "drizzle-orm";
import Database from "libsql";
import type { ResourceStore } from "../metadata/resource-store.js";
import { type ResourceRow, resources } from "../metadata/schema.js";

export function withPreparedUriLookup(store: ResourceStore, databaseFile: string): ResourceStore & { close(): void } {
  const db = new Database(databaseFile);
  const columns = Object.entries(getTableColumns(resources));
  const select = db.prepare(
    `SELECT ${columns.map(([, c]) => `"${c.name}"`).join(", ")} FROM resources WHERE context = ? AND path = ? LIMIT 1`,
  );
  select.raw(true);
  // Rows are mapped with drizzle's own column definitions, so they equal what the store returns.
  const toRow = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const [key, column] = columns[i] as (typeof columns)[number];
      row[key] = values[i] === null ? null : column.mapFromDriverValue(values[i]);
    }
    return row as ResourceRow;
  };
  return {
    ...store,
    async findByUri(context, path) {
      const values = select.get(context, path) as unknown[] | undefined;
      return values ? toRow(values) : null;
    },
    close: () => db.close(),
  };
}
