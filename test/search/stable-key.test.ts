/**
 * resources_fts (FTS5, external content) finds rows by an integer key of `resources`. The rowid is
 * none: `resources` has no INTEGER PRIMARY KEY, so a dump and restore, or a table rebuild (SQLite's
 * generalized ALTER TABLE procedure, which drizzle-kit emits to change a column) gives the rows new
 * rowids, and SQLite documents that VACUUM may too. Search must still find each row by its own text.
 * Real libSQL file, the shipped migrations and SearchStore.
 */
import type { Client } from "@libsql/client";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { matchExpression, searchTerms } from "../../src/lib/search-query.js";
import { createMetadataStore } from "../../src/metadata/metadata-store.js";
import { drizzle } from "../../src/runtime/host/database.js";
import { applyMigrations } from "../helpers/sql-migrations.js";

let dir: string;
let client: Client;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-fts-key-"));
  client = await applyMigrations(`file:${join(dir, "cms.db")}`, () => true);
  await client.execute("INSERT INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)");
});
afterEach(async () => {
  client.close();
  await rm(dir, { recursive: true, force: true });
});

const insert = (n: number, title: string) =>
  client.execute(
    `INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key, created_at, updated_at, title)
     VALUES ('u${n}-t', 's${n}', 't', 'u${n}-t', 'f.txt', 'f.txt', 'A', 'text/plain', 1, 'h', 't/k', ${n}, ${n}, '${title}')`,
  );

/** The UIDs a search for `q` finds, through the store as searchResources runs it. */
async function found(q: string): Promise<string[]> {
  const store = createMetadataStore(drizzle(client));
  const hits = await store.search.search({
    tenantId: "t",
    match: matchExpression(searchTerms(q)),
    tagKeys: [],
    tagMatches: [],
    recursive: false,
    sort: "name",
    limit: 10,
  });
  return hits.map((h) => h.row.uid).sort();
}

/** `resources` copied into a new table that replaces it, with its indexes and triggers made again. */
async function rebuildResources() {
  const { rows } = await client.execute(
    "SELECT type, sql FROM sqlite_schema WHERE tbl_name = 'resources' AND sql IS NOT NULL ORDER BY type = 'table' DESC",
  );
  const [table, ...dependents] = rows.map((r) => String(r.sql));
  const columns = (await client.execute("SELECT name FROM pragma_table_info('resources')")).rows
    .map((r) => `\`${String(r.name)}\``)
    .join(", ");
  await client.execute((table as string).replace(/CREATE TABLE [`"]?resources[`"]?/, "CREATE TABLE `__new_resources`"));
  // Columns named, as drizzle-kit writes it (SELECT * would take SQLite's rowid-keeping table copy).
  await client.execute(`INSERT INTO \`__new_resources\` (${columns}) SELECT ${columns} FROM \`resources\``);
  await client.execute("DROP TABLE `resources`");
  await client.execute("ALTER TABLE `__new_resources` RENAME TO `resources`");
  for (const sql of dependents) await client.execute(sql);
}

describe("the full-text index's key", () => {
  it("survives a rebuild of the resources table that renumbers its rowids", async () => {
    await insert(1, "alpha");
    await insert(2, "bravo");
    await insert(3, "charlie");
    await insert(4, "delta");
    // A purged row leaves a gap in the rowids, which the copy closes.
    await client.execute("DELETE FROM resources WHERE uid = 'u1-t'");
    await rebuildResources();
    const { rows } = await client.execute("SELECT rowid FROM resources WHERE uid = 'u3-t'");
    expect(rows[0]?.rowid, "the rebuild renumbered the rows").toBe(2);

    expect(await found("charlie")).toEqual(["u3-t"]);
    expect(await found("bravo")).toEqual(["u2-t"]);
    expect(await found("alpha")).toEqual([]);
    // Rows written afterwards are indexed under keys of their own, and the old ones stay found.
    await insert(5, "echo");
    expect(await found("echo")).toEqual(["u5-t"]);
    expect(await found("delta")).toEqual(["u4-t"]);
    await client.execute("UPDATE resources SET title = 'foxtrot' WHERE uid = 'u2-t'");
    expect(await found("foxtrot")).toEqual(["u2-t"]);
    expect(await found("bravo")).toEqual([]);
    await client.execute("INSERT INTO resources_fts (resources_fts) VALUES ('integrity-check')");
  });
});
