/**
 * folder_counts (migration 0016), what the `folders` listing reads: kept exact by triggers through
 * every way a resource enters, leaves or moves between folders (create, soft delete, move, purge, a
 * package's files, which never count), also with two connections writing at once. Each check compares
 * the table with a count of the resources themselves. Real libSQL file, the shipped migrations.
 */
import { type Client, createClient } from "@libsql/client";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyMigrations } from "../helpers/sql-migrations.js";

let dir: string;
let url: string;
let client: Client;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-folder-counts-"));
  url = `file:${join(dir, "cms.db")}`;
  client = await applyMigrations(url, () => true);
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute("INSERT INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)");
});
afterEach(async () => {
  client.close();
  await rm(dir, { recursive: true, force: true });
});

const insert = (db: Client, uid: string, tenant: string, folder: string, parent: string | null = null) =>
  db.execute({
    sql: `INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key, created_at, updated_at, folder, parent_uid)
          VALUES (?, ?, ?, ?, 'f.txt', 'f.txt', 'A', 'text/plain', 1, 'h', 't/k', 1, 1, ?, ?)`,
    args: [uid, uid, tenant, uid, folder, parent],
  });

/** [tenant, folder, resources] of folder_counts, and of a count of the live top-level resources. */
async function countsAndTruth() {
  const rows = async (sql: string) => (await client.execute(sql)).rows.map((r) => [r.tenant_id, r.folder, Number(r.n)]);
  return {
    counts: await rows("SELECT tenant_id, folder, resources AS n FROM folder_counts ORDER BY tenant_id, folder"),
    truth: await rows(
      "SELECT tenant_id, folder, count(*) AS n FROM resources WHERE deleted_at IS NULL AND parent_uid IS NULL GROUP BY tenant_id, folder ORDER BY tenant_id, folder",
    ),
  };
}

async function expectExact() {
  const { counts, truth } = await countsAndTruth();
  expect(counts).toEqual(truth);
  return counts;
}

describe("folder_counts", () => {
  it("follows creates, soft deletes, moves and purges, and ignores a package's files", async () => {
    await insert(client, "a", "t", "/photos/");
    await insert(client, "b", "t", "/photos/");
    await insert(client, "c", "t", "/docs/");
    await insert(client, "d", "other", "/photos/");
    await insert(client, "pkg", "t", "/");
    await insert(client, "pkg-file", "t", "/", "pkg");
    expect(await expectExact()).toEqual([
      ["other", "/photos/", 1],
      ["t", "/", 1],
      ["t", "/docs/", 1],
      ["t", "/photos/", 2],
    ]);
    // Moved (updateResourceMetadata), the last one out of /docs/: its row goes.
    await client.execute("UPDATE resources SET folder = '/photos/2026/' WHERE uid = 'c'");
    // Described without a move: the counts stay.
    await client.execute("UPDATE resources SET folder = '/photos/', title = 'x' WHERE uid = 'a'");
    // Soft deleted, with the package's files (as deleteResource does).
    await client.execute("UPDATE resources SET deleted_at = 5 WHERE uid IN ('b', 'pkg', 'pkg-file')");
    expect(await expectExact()).toEqual([
      ["other", "/photos/", 1],
      ["t", "/photos/", 1],
      ["t", "/photos/2026/", 1],
    ]);
    // Purged: a deleted row no longer counted, then a live one.
    await client.execute("DELETE FROM resources WHERE uid IN ('b', 'pkg', 'pkg-file')");
    await client.execute("DELETE FROM resources WHERE uid = 'd'");
    expect(await expectExact()).toEqual([
      ["t", "/photos/", 1],
      ["t", "/photos/2026/", 1],
    ]);
  });

  it("stays exact with two connections writing at once", async () => {
    const other = createClient({ url });
    try {
      await other.execute("PRAGMA busy_timeout = 10000");
      await client.execute("PRAGMA busy_timeout = 10000");
      const work = (db: Client, side: string) =>
        (async () => {
          for (let i = 0; i < 40; i++) {
            await insert(db, `${side}${i}`, "t", `/f${i % 3}/`);
            if (i % 4 === 1)
              await db.execute({
                sql: "UPDATE resources SET folder = '/moved/' WHERE uid = ?",
                args: [`${side}${i - 1}`],
              });
            if (i % 5 === 2)
              await db.execute({ sql: "UPDATE resources SET deleted_at = 1 WHERE uid = ?", args: [`${side}${i}`] });
            if (i % 7 === 3)
              await db.execute({ sql: "DELETE FROM resources WHERE uid = ?", args: [`${side}${i - 2}`] });
          }
        })();
      await Promise.all([work(client, "x"), work(other, "y")]);
      const counts = await expectExact();
      expect(counts.length).toBeGreaterThan(0);
    } finally {
      other.close();
    }
  });
});
