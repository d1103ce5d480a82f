/**
 * Issue 38's migration on a database that already holds resources: they get folder `/`, no tags,
 * empty metadata, and are found by name at once; afterwards the full-text index follows every write
 * (insert, rename, description change, purge) in the writing statement's own transaction.
 * Real libSQL files, migrated with the same drizzle/*.sql as D1 (wrangler applies them there).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyMigrations } from "../helpers/sql-migrations.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-describe-migration-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const BEFORE = "0015";
const RESERVED = "INSERT OR IGNORE INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)";
const oldRow = (n: number, name: string) =>
  `INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key, created_at, updated_at)
   VALUES ('u${n}', 's${n}', 't', 'c${n}', '${name}', '${name}', 'A', 'text/plain', 1, 'h', 't/k', ${n}, ${n})`;

const found = async (client: Awaited<ReturnType<typeof applyMigrations>>, match: string) =>
  (
    await client.execute({
      sql: "SELECT r.uid FROM resources_fts f JOIN resources r ON r.seq = f.rowid % 1099511627776 WHERE resources_fts MATCH ? ORDER BY r.uid",
      args: [match],
    })
  ).rows.map((r) => r.uid);

describe("the describe-and-find migration", () => {
  it("gives existing resources the defaults and makes them searchable by name at once", async () => {
    const url = `file:${join(dir, "cms.db")}`;
    const before = await applyMigrations(url, (f) => f < BEFORE);
    await before.execute(RESERVED);
    await before.execute(oldRow(1, "Café Sunset.jpg"));
    await before.execute(oldRow(2, "report.pdf"));
    before.close();
    const client = await applyMigrations(url, (f) => f >= BEFORE);
    try {
      const { rows } = await client.execute(
        "SELECT folder, tags, metadata, metadata_version, title, description, alt_text, thumbhash FROM resources WHERE uid = 'u1'",
      );
      expect({ ...rows[0] }).toEqual({
        folder: "/",
        tags: "[]",
        metadata: "{}",
        metadata_version: 1,
        title: null,
        description: null,
        alt_text: null,
        thumbhash: null,
      });
      // Case- and accent-insensitive, whole words.
      expect(await found(client, '"cafe"')).toEqual(["u1"]);
      expect(await found(client, '"SUNSET"')).toEqual(["u1"]);
      expect(await found(client, '"sun"')).toEqual([]);
      expect(await found(client, '"sun"*')).toEqual(["u1"]);
    } finally {
      client.close();
    }
  });

  it("keeps the index in step with inserts, changes and deletes", async () => {
    const client = await applyMigrations(`file:${join(dir, "cms.db")}`, () => true);
    try {
      await client.execute(RESERVED);
      await client.execute(oldRow(1, "a.txt"));
      await client.execute("UPDATE resources SET title = 'Harbour at dawn', tags = '[\"Boats\"]' WHERE uid = 'u1'");
      expect(await found(client, '"harbour"')).toEqual(["u1"]);
      expect(await found(client, '"boats"')).toEqual(["u1"]);
      await client.execute("UPDATE resources SET name = 'b.txt', title = NULL WHERE uid = 'u1'");
      expect(await found(client, '"harbour"')).toEqual([]);
      expect(await found(client, '"a"')).toEqual([]);
      expect(await found(client, '"b"')).toEqual(["u1"]);
      // A change of other columns (a new revision) leaves the index alone, and it stays right.
      await client.execute("UPDATE resources SET revision = 2 WHERE uid = 'u1'");
      expect(await found(client, '"b"')).toEqual(["u1"]);
      // Only what a search may find is indexed: a soft delete takes it out, a restore puts it back,
      // a package's file (a child row) is never in.
      await client.execute("UPDATE resources SET deleted_at = 5 WHERE uid = 'u1'");
      expect(await found(client, '"b"')).toEqual([]);
      await client.execute("UPDATE resources SET deleted_at = NULL WHERE uid = 'u1'");
      expect(await found(client, '"b"')).toEqual(["u1"]);
      await client.execute(oldRow(2, "b.txt"));
      await client.execute("UPDATE resources SET parent_uid = 'u1' WHERE uid = 'u2'");
      expect(await found(client, '"b"')).toEqual(["u1"]);
      // Each tenant's rows are one range of keys: its number × 2^40 + seq.
      await client.execute(oldRow(3, "b.txt").replace("'t'", "'t2'"));
      const { rows: keys } = await client.execute(
        "SELECT f.rowid / 1099511627776 AS tenant_no, r.tenant_id FROM resources_fts f JOIN resources r ON r.seq = f.rowid % 1099511627776 WHERE resources_fts MATCH '\"b\"' ORDER BY r.uid",
      );
      const numbers = await client.execute("SELECT no, tenant_id FROM search_tenants ORDER BY no");
      expect(keys.map((k) => [k.tenant_no, k.tenant_id])).toEqual(numbers.rows.map((n) => [n.no, n.tenant_id]));
      await client.execute("DELETE FROM resources WHERE uid IN ('u1', 'u2', 'u3')");
      expect(await found(client, '"b"')).toEqual([]);
      // The index is consistent (FTS5's own check; contentless, so of the index alone).
      await client.execute("INSERT INTO resources_fts (resources_fts) VALUES ('integrity-check')");
    } finally {
      client.close();
    }
  });
});
