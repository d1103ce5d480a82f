/**
 * MetadataStore and LockStore on a real migrated libSQL database — a file (metadata-store.test.ts),
 * a sqld server over http:// and ws:// (metadata-store.sqld.test.ts): batches are all or nothing,
 * guarded changes apply only under a live matching lock and the expected revision, locks expire lazily.
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetadataStore, type GuardedChange, type MetadataStore } from "../../src/metadata/metadata-store.js";
import type { NewResourceRow } from "../../src/metadata/schema.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { MIGRATIONS_FOLDER } from "../../src/runtime/host/migrations.js";
import { reservingStore } from "../helpers/reserving-store.js";
import { resourceRow } from "../helpers/resource-row.js";

/** Where the suite runs: each test gets fresh, empty databases, removed after it. */
export interface DatabaseEngine {
  name: string;
  /** The URL of a new empty database (CMS_DATABASE_URL). */
  fresh(): Promise<string>;
  /** Removes every database `fresh` made since the last cleanup. */
  cleanup(): Promise<void>;
}

export function describeMetadataStore(engine: DatabaseEngine): void {
  describe(`metadata store on ${engine.name}`, () => {
    let url: string;
    let store: MetadataStore;
    let close: () => void;

    beforeEach(async () => {
      url = await engine.fresh();
      const db = await openDatabase({ CMS_DATABASE_URL: url });
      store = reservingStore(createMetadataStore(db.db));
      close = db.close;
    });
    afterEach(async () => {
      close();
      await engine.cleanup();
    });

    let seq = 0;
    function row(over: Partial<NewResourceRow> = {}): NewResourceRow & { uid: string } {
      const shortId = `id${String(++seq).padStart(4, "0")}`;
      const uid = over.uid ?? `${shortId}-t`;
      return {
        ...resourceRow(uid, { shortId, blobKey: `k${seq}`, createdAt: 1000 + seq, updatedAt: 1000 + seq, ...over }),
        uid,
      };
    }

    const lock = { lockId: "L1", owner: "Alice", holder: null };
    const change = (uid: string, over: Partial<GuardedChange> = {}): GuardedChange => ({
      uid,
      expectedRevision: 1,
      lock,
      actor: null,
      now: 5000,
      ...over,
    });
    const take = (name: string, expiresAt = 10_000, now = 1000) =>
      store.locks.acquire({ name, ...lock, expiresAt, now });

    describe("insertAll", () => {
      it("inserts a package and its files with one create revision each", async () => {
        const zip = row({ path: "p.zip", name: "p.zip" });
        const files = [1, 2, 3].map((i) => row({ context: zip.uid, parentUid: zip.uid, path: `f${i}`, name: `f${i}` }));
        const inserted = await store.insertAll([zip, ...files]);
        expect(inserted.map((r) => r.uid)).toEqual([zip.uid, ...files.map((f) => f.uid)]);
        expect((await store.children(zip.uid)).map((r) => r.path)).toEqual(["f1", "f2", "f3"]);
        for (const r of inserted)
          expect((await store.revisions(r.uid)).map((v) => [v.revision, v.action])).toEqual([[1, "create"]]);
      });

      it("answers each row exactly as stored: every column, defaults and nulls filled, in column order", async () => {
        // Creates no longer read their rows back (RETURNING): what they answer must be what a read finds.
        const zip = row({ path: "p.zip", name: "p.zip", owner: "alice", ownerIssuer: "https://idp" });
        const files = Array.from({ length: 7 }, (_, i) =>
          row({ context: zip.uid, parentUid: zip.uid, path: `f${i}`, externalUri: null }),
        );
        const inserted = await store.insertAll([zip, ...files]);
        for (const r of inserted) {
          const read = await store.findByUid(r.uid);
          // But `seq`, the full-text index's key, which the insert's trigger gives (migration 0016)
          // and only SQL uses: the answer has none, the row read has its own.
          expect(read?.seq).toEqual(expect.any(Number));
          expect(r).toStrictEqual({ ...read, seq: null });
          expect(Object.keys(r)).toEqual(Object.keys(read ?? {}));
        }
        const seqs = await Promise.all(inserted.map(async (r) => (await store.findByUid(r.uid))?.seq));
        expect(new Set(seqs).size).toBe(inserted.length);
        expect(inserted[0]).toMatchObject({
          revision: 1,
          deletedAt: null,
          parentUid: null,
          externalUri: null,
          owner: "alice",
        });
      });

      it("chunks large inserts (D1's 100 parameters) and still inserts all rows", async () => {
        const zip = row();
        const files = Array.from({ length: 40 }, (_, i) =>
          row({ context: zip.uid, parentUid: zip.uid, path: `f${i}` }),
        );
        expect(await store.insertAll([zip, ...files])).toHaveLength(41);
      });

      it("is all or nothing: a duplicate URI in the last chunk leaves no row and no revision", async () => {
        const zip = row();
        const files = Array.from({ length: 12 }, (_, i) =>
          row({ context: zip.uid, parentUid: zip.uid, path: i === 11 ? "f0" : `f${i}` }),
        );
        await expect(store.insertAll([zip, ...files])).rejects.toThrow();
        expect(await store.findByUid(zip.uid)).toBeNull();
        expect(await store.children(zip.uid)).toEqual([]);
        expect(await store.countByBlobKey(zip.blobKey)).toBe(0);
      });
    });

    describe("guarded update", () => {
      it("applies under the live matching lock and the expected revision, writing one update revision", async () => {
        const r = await store.insert(row());
        await take(r.uid);
        const updated = await store.update(change(r.uid), { author: "B", blobKey: "new", sha256: "n" });
        expect(updated).toMatchObject({ author: "B", revision: 2, blobKey: "new", name: "a.txt", updatedAt: 5000 });
        expect((await store.revisions(r.uid)).map((v) => [v.revision, v.action, v.author, v.blobKey])).toEqual([
          [1, "create", "A", r.blobKey],
          [2, "update", "B", "new"],
        ]);
        expect(await store.countByBlobKey(r.blobKey)).toBe(1); // the old content is still referenced by revision 1
      });

      it.each([
        ["no lock", async () => {}, {}],
        ["an expired lock", async (uid: string) => void (await take(uid, 4000)), {}],
        ["another lockID", async (uid: string) => void (await take(uid)), { lock: { ...lock, lockId: "L2" } }],
        ["another owner", async (uid: string) => void (await take(uid)), { lock: { ...lock, owner: "Bob" } }],
        ["another holder", async (uid: string) => void (await take(uid)), { lock: { ...lock, holder: "sub-2" } }],
        ["a stale revision", async (uid: string) => void (await take(uid)), { expectedRevision: 2 }],
      ])("changes nothing with %s", async (_label, prepare, over) => {
        const r = await store.insert(row());
        await prepare(r.uid);
        expect(await store.update(change(r.uid, over), { author: "B" })).toBeNull();
        expect(await store.findByUid(r.uid)).toMatchObject({ author: "A", revision: 1 });
        expect(await store.revisions(r.uid)).toHaveLength(1);
      });

      it("lets only one of two updates from the same revision win", async () => {
        const r = await store.insert(row());
        await take(r.uid);
        const results = await Promise.all([
          store.update(change(r.uid), { author: "X" }),
          store.update(change(r.uid, { now: 5001 }), { author: "Y" }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await store.revisions(r.uid)).toHaveLength(2);
      });
    });

    describe("softDelete and purge", () => {
      it("deletes a package with its files, records delete revisions and drops the lock", async () => {
        const zip = await store.insert(row());
        const files = await store.insertAll([row({ uid: "f1-t", shortId: "f1", context: "ctx1", parentUid: zip.uid })]);
        await take(zip.uid);
        const deleted = await store.softDelete(change(zip.uid));
        expect(deleted).toMatchObject({ deletedAt: 5000, revision: 2 });
        expect(await store.findByUid(files[0]?.uid as string)).toMatchObject({ deletedAt: 5000, revision: 2 });
        expect((await store.revisions("f1-t")).map((v) => v.action)).toEqual(["create", "delete"]);
        expect(await store.locks.find(zip.uid, 1000)).toBeNull();
        expect(await store.list({ tenantId: "t", limit: 10 })).toEqual([]);
      });

      it("purge removes rows, revisions and locks and reports every blob key they used", async () => {
        const r = await store.insert(row());
        await take(r.uid);
        await store.update(change(r.uid), { blobKey: "second" });
        const purged = await store.purge(r.uid, 6000);
        expect(purged?.uids).toEqual([r.uid]);
        expect(purged?.blobKeys.sort()).toEqual([r.blobKey, "second"].sort());
        expect(await store.findByUid(r.uid)).toBeNull();
        expect(await store.revisions(r.uid)).toEqual([]);
        expect(await store.countByBlobKey("second")).toBe(0);
        expect(await store.purge(r.uid, 6000)).toBeNull();
      });
    });

    describe("locks", () => {
      it("acquire refuses a live lock, takes over an expired one, and renew/release need the proof", async () => {
        expect((await take("n", 2000, 1000)).acquired).toBe(true);
        const refused = await store.locks.acquire({
          name: "n",
          lockId: "L2",
          owner: "Bob",
          holder: null,
          expiresAt: 3000,
          now: 1500,
        });
        expect(refused).toMatchObject({ acquired: false, held: { lockId: "L1" } });
        const later = await store.locks.acquire({
          name: "n",
          lockId: "L2",
          owner: "Bob",
          holder: null,
          expiresAt: 9000,
          now: 2000,
        });
        expect(later).toMatchObject({ acquired: true, lock: { lockId: "L2", owner: "Bob" } });
        expect(await store.locks.renew("n", lock, 9999, 2500)).toBeNull();
        expect(await store.locks.renew("n", { ...lock, lockId: "L2", owner: "Bob" }, 9999, 2500)).toMatchObject({
          expiresAt: 9999,
        });
        expect(await store.locks.release("n", lock)).toBeNull();
        expect(await store.locks.release("n", null)).toMatchObject({ lockId: "L2" });
        expect(await store.locks.find("n", 2500)).toBeNull();
      });
    });

    /** A database as a release that had only the first `count` migrations left it: applied and recorded as drizzle records them. */
    async function applyFirstMigrations(client: ReturnType<typeof createClient>, count: number) {
      const { readMigrationFiles } = await import("drizzle-orm/migrator");
      await client.execute(
        "create table __drizzle_migrations (id integer primary key autoincrement, hash text not null, created_at numeric)",
      );
      for (const migration of readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).slice(0, count)) {
        for (const statement of migration.sql) if (statement.trim()) await client.execute(statement);
        await client.execute({
          sql: "insert into __drizzle_migrations (hash, created_at) values (?, ?)",
          args: [migration.hash, migration.folderMillis],
        });
      }
    }

    /**
     * Upgrades a database a release with only the first `count` migrations left: `before` writes its
     * rows there, then every migration runs and `after` checks the result.
     */
    async function upgradeFrom(
      count: number,
      before: (client: ReturnType<typeof createClient>) => Promise<unknown>,
      after: (db: ReturnType<typeof drizzle>, client: ReturnType<typeof createClient>) => Promise<void>,
    ) {
      const client = createClient({ url: await engine.fresh() });
      try {
        const db = drizzle(client);
        await applyFirstMigrations(client, count);
        await before(client);
        await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
        await after(db, client);
      } finally {
        client.close();
      }
    }

    describe("migrations", () => {
      it("0001 backfills URI columns and a create revision for rows written before it", async () => {
        // Only 0000 applied (as an older deployment had), a row written, then migrated fully.
        await upgradeFrom(
          1,
          (client) =>
            client.execute(
              "insert into resources (uid, short_id, tenant_id, name, author, media_type, size, sha256, blob_key, created_at, updated_at) values ('old-t','old','t','o.txt','A','text/plain',1,'s','k',1,1)",
            ),
          async (db) => {
            const old = createMetadataStore(db);
            expect(await old.findByUid("old-t")).toMatchObject({
              context: "old-t",
              path: "o.txt",
              revision: 1,
              deletedAt: null,
            });
            expect((await old.revisions("old-t")).map((r) => r.action)).toEqual(["create"]);
            expect(await old.findByUri("old-t", "o.txt")).not.toBeNull();
          },
        );
      });

      it("0006 recounts each tenant's stored bytes with the content earlier revisions keep, and clears the bytes limit it may now exceed", async () => {
        // 0000–0005 applied (as the previous release had), usage counted the old way, then migrated fully.
        await upgradeFrom(
          6,
          (client) =>
            client.batch([
              "insert into blob_ledger (key, pending, touched_at) values ('k300', 0, 1), ('k150', 0, 1), ('k100', 0, 1)",
              // u-t: created with 300 bytes, updated to 150 (the 300 stay as revision 1); v-t: 100 bytes.
              "insert into resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key, revision, created_at, updated_at) values ('u-t','u','legacy','u-t','u.bin','u.bin','A','application/octet-stream',150,'s','k150',2,1,2), ('v-t','v','legacy','v-t','v.bin','v.bin','A','application/octet-stream',100,'s','k100',1,1,1)",
              "insert into revisions (resource_uid, revision, action, name, author, media_type, size, sha256, blob_key, created_at) values ('u-t',1,'create','u.bin','A','application/octet-stream',300,'s','k300',1), ('u-t',2,'update','u.bin','A','application/octet-stream',150,'s','k150',2), ('v-t',1,'create','v.bin','A','application/octet-stream',100,'s','k100',1)",
              // Counted the old way (current sizes only), under a 300-byte limit.
              "insert into tenant_usage (tenant_id, bytes, resources, max_bytes) values ('legacy', 250, 2, 300)",
            ]),
          async (db) => {
            const migrated = createMetadataStore(db);
            expect(await migrated.usage("legacy")).toMatchObject({ bytes: 550, resources: 2, maxBytes: 0 });
            // Purge gives back exactly what the recount charged.
            await migrated.purge("u-t", 10);
            expect(await migrated.usage("legacy")).toMatchObject({ bytes: 100, resources: 1 });
          },
        );
      });

      it("0007 narrows the ledger's indexes to the collector's rows; the collector still finds them after the upgrade", async () => {
        // 0000–0006 applied (the previous release), a ledger with a referenced, a due and a doomed blob.
        await upgradeFrom(
          7,
          (client) =>
            client.execute(
              "insert into blob_ledger (key, pending, touched_at, check_after, doomed_at) values ('kept', 0, 1, null, null), ('due', 0, 1, 50, null), ('doomed', 0, 1, null, 40)",
            ),
          async (db, client) => {
            const { rows } = await client.execute(
              "select name, sql from sqlite_master where tbl_name = 'blob_ledger' and type = 'index' and sql is not null order by name",
            );
            expect(rows.map((r) => [r.name, /where .* is not null$/i.test(String(r.sql))])).toEqual([
              ["blob_ledger_check_idx", true],
              ["blob_ledger_doomed_idx", true],
            ]);
            const { ledger } = createMetadataStore(db);
            expect(await ledger.due(100, 10)).toEqual(["due"]);
            expect(await ledger.staleDooms(100, 10)).toEqual([{ key: "doomed", doomedAt: 40 }]);
            expect(await ledger.find("kept")).toEqual({ pending: 0, doomedAt: null });
          },
        );
      });

      it("0008 gives uploads a state, and charges the unfinished ones' Upload-Length to their tenants; terminating one gives it back", async () => {
        // 0000–0007 applied (the previous release): a finished and two unfinished uploads, one tenant with usage, one without.
        await upgradeFrom(
          8,
          (client) =>
            client.batch([
              "insert into tus_uploads (id, tenant_id, fields, length, offset, resource_uid, created_at, expires_at) values ('done', 'old', '{}', 40, 40, 'r-old', 1, 9e15), ('open', 'old', '{}', 70, 10, null, 1, 9e15), ('new', 'fresh', '{}', 5, 0, null, 1, 9e15)",
              "insert into tenant_usage (tenant_id, bytes, resources, max_bytes) values ('old', 40, 1, 100)",
            ]),
          async (db) => {
            const migrated = createMetadataStore(db);
            expect((await migrated.tusUploads.find("done"))?.state).toBe("finished");
            expect((await migrated.tusUploads.find("open"))?.state).toBe("pending");
            expect(await migrated.usage("old")).toMatchObject({ bytes: 110, resources: 1, maxBytes: 0 });
            expect(await migrated.usage("fresh")).toMatchObject({ bytes: 5, resources: 0 });
            await migrated.tusUploads.terminate("open");
            await migrated.tusUploads.terminate("done");
            expect(await migrated.usage("old")).toMatchObject({ bytes: 40 });
          },
        );
      });
    });

    describe("deployment id", () => {
      it("is made once, on first use: every caller, racing or later, and every reopening get the same; another database has another", async () => {
        const ids = await Promise.all(Array.from({ length: 5 }, () => store.deploymentId()));
        expect(new Set(ids).size).toBe(1);
        expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        close();
        const reopened = await openDatabase({ CMS_DATABASE_URL: url });
        close = reopened.close;
        expect(await createMetadataStore(reopened.db).deploymentId()).toBe(ids[0]);
        const other = await openDatabase({ CMS_DATABASE_URL: await engine.fresh() });
        try {
          expect(await createMetadataStore(other.db).deploymentId()).not.toBe(ids[0]);
        } finally {
          other.close();
        }
      });
    });
  });
}
