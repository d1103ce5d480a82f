/**
 * Rows from before owner_issuer existed are adopted by the configured issuer once, not on every start
 * (and every Worker isolate's first request): the issuer is a runtime setting, so start-up does the
 * fix, recorded in data_fixes; a database with nothing to adopt has it recorded by its migration.
 * Real libSQL files, migrated by the same code (and the same drizzle/*.sql) as the server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetadataStore } from "../../src/metadata/metadata-store.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { applyMigrations } from "../helpers/sql-migrations.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-legacy-owners-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The row's blob, known to the ledger (a trigger refuses a row whose blob is not reserved). */
const RESERVED = "INSERT OR IGNORE INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)";
const legacyRow = (n: number) =>
  `INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key, owner, created_at, updated_at)
   VALUES ('u${n}', 's${n}', 't', 'c${n}', 'a.txt', 'a.txt', 'A', 'text/plain', 1, 'h', 't/k', 'alice', 1, 1)`;

describe("adopting legacy owners", () => {
  it("runs once: a second start does not run the UPDATE again", async () => {
    const url = `file:${join(dir, "cms.db")}`;
    const { db, close } = await openDatabase({ CMS_DATABASE_URL: url });
    try {
      // As a database migrated while it held legacy rows: the fix is not recorded yet.
      await db.$client.execute("DELETE FROM data_fixes");
      await db.$client.execute(RESERVED);
      await db.$client.execute(legacyRow(1));
      const store = createMetadataStore(db);
      expect(await store.adoptLegacyOwners("https://issuer.example")).toBe(1);
      const adopted = await db.$client.execute("SELECT owner_issuer FROM resources WHERE uid = 'u1'");
      expect(adopted.rows[0]?.[0]).toBe("https://issuer.example");
      // A row the UPDATE would match now stays as it is: the fix is done, and not run again.
      await db.$client.execute(RESERVED);
      await db.$client.execute(legacyRow(2));
      expect(await store.adoptLegacyOwners("https://other.example")).toBe(0);
      const untouched = await db.$client.execute("SELECT owner_issuer FROM resources WHERE uid = 'u2'");
      expect(untouched.rows[0]?.[0]).toBeNull();
    } finally {
      close();
    }
  });

  it("its migration records it done where there is nothing to adopt, and only there", async () => {
    const fresh = await applyMigrations(`file:${join(dir, "fresh.db")}`, () => true);
    expect((await fresh.execute("SELECT name FROM data_fixes")).rows.map((r) => r[0])).toEqual(["adopt_legacy_owners"]);
    fresh.close();

    const legacyUrl = `file:${join(dir, "legacy.db")}`;
    const before = await applyMigrations(legacyUrl, (f) => f < "0010");
    await before.execute(RESERVED);
    await before.execute(legacyRow(1));
    before.close();
    const after = await applyMigrations(legacyUrl, (f) => f >= "0010");
    expect((await after.execute("SELECT name FROM data_fixes")).rows).toEqual([]);
    after.close();
  });
});
