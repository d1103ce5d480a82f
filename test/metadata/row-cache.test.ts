/**
 * The remote database's row cache (metadata/row-cache.ts) on a real migrated libSQL file: "this
 * instance" is the cached store, "another instance" a second connection's store on the same file.
 * Its coherence rule: another instance's change is seen within the TTL, this instance's own writes
 * at once, a miss is never cached, a versioned lookup may keep a matching row longer. Its clock is
 * moved by the test (pure timing logic); everything else is the real database.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetadataStore, type GuardedChange, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { type RowCachedStore, withRowCache } from "../../src/metadata/row-cache.js";
import type { NewResourceRow } from "../../src/metadata/schema.js";
import { reservingStore } from "../helpers/reserving-store.js";
import { resourceRow } from "../helpers/resource-row.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";

const TTL = 1_000;
const VERSIONED_TTL = 60_000;

let temp: TempStore;
let here: RowCachedStore;
let other: MetadataStore;
let base: MetadataStore;
let clock: number;
let lookups: number;
/** Set: the database's lookups fail with it (the database is down). */
let down: Error | undefined;

beforeEach(async () => {
  temp = await tempStore("row-cache");
  const mine = await temp.open();
  const theirs = await temp.open();
  clock = 0;
  lookups = 0;
  down = undefined;
  base = reservingStore(createMetadataStore(mine.db));
  const counted: MetadataStore = {
    ...base,
    findByUri: (context, path) => {
      lookups++;
      return down ? Promise.reject(down) : base.findByUri(context, path);
    },
  };
  here = withRowCache(counted, { rows: 100, ttlMs: TTL, versionedTtlMs: VERSIONED_TTL, now: () => clock });
  other = reservingStore(createMetadataStore(theirs.db));
});
afterEach(() => temp.close());

let seq = 0;
function row(over: Partial<NewResourceRow> = {}): NewResourceRow & { uid: string } {
  const shortId = `id${String(++seq).padStart(4, "0")}`;
  const uid = over.uid ?? `${shortId}-t`;
  return {
    ...resourceRow(uid, {
      shortId,
      sha256: "0123456789abcdef",
      blobKey: `k${seq}`,
      createdAt: 1000 + seq,
      updatedAt: 1000 + seq,
      ...over,
    }),
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
const take = (store: MetadataStore, name: string) =>
  store.locks.acquire({ name, ...lock, expiresAt: 10_000, now: 1000 });

describe("the row cache of a remote database", () => {
  it("answers a found row from memory, in the same call too, with one database lookup", async () => {
    const r = await other.insert(row());
    expect(here.findByUriNow?.(r.context, r.path)).toBeUndefined(); // not known yet: ask findByUri
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid);
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid);
    expect(here.findByUriNow?.(r.context, r.path)?.uid).toBe(r.uid);
    expect(lookups).toBe(1);
  });

  it("counts its hits and misses for the metrics (cms_row_cache_lookups_total)", async () => {
    const r = await other.insert(row());
    expect(here.findByUriNow?.(r.context, r.path)).toBeUndefined(); // goes on to findByUri: counted there
    await here.findByUri(r.context, r.path); // miss
    await here.findByUri(r.context, r.path); // hit
    here.findByUriNow?.(r.context, r.path); // hit
    await here.findByUri("nowhere", "x"); // miss (never cached)
    expect(here.rowCacheStats()).toEqual({ hits: 2, misses: 2 });
  });

  it("shares one database lookup among concurrent requests for a row it does not hold", async () => {
    const r = await other.insert(row());
    const found = await Promise.all(Array.from({ length: 10 }, () => here.findByUri(r.context, r.path)));
    expect(found.map((f) => f?.uid)).toEqual(Array(10).fill(r.uid));
    expect(lookups).toBe(1);
  });

  it("never caches a miss: a resource created on another instance is found at once", async () => {
    const r = row();
    expect(await here.findByUri(r.context, r.path)).toBeNull();
    await other.insert(r);
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid);
  });

  it("sees another instance's update and delete within the TTL, not before", async () => {
    const r = await other.insert(row());
    await take(other, r.uid);
    expect((await here.findByUri(r.context, r.path))?.author).toBe("A");
    await other.update(change(r.uid), { author: "B" });
    clock = TTL - 1;
    expect((await here.findByUri(r.context, r.path))?.author).toBe("A"); // within the bound
    clock = TTL;
    expect((await here.findByUri(r.context, r.path))?.author).toBe("B");

    await other.softDelete(change(r.uid, { expectedRevision: 2, now: 6000 }));
    expect((await here.findByUri(r.context, r.path))?.deletedAt).toBeNull();
    clock = 2 * TTL;
    expect((await here.findByUri(r.context, r.path))?.deletedAt).toBe(6000);
  });

  it("past the TTL serves nothing from memory while the database is down: its failure reaches the caller", async () => {
    const r = await other.insert(row());
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid);
    down = new Error("database unavailable");
    clock = TTL - 1;
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid); // within the bound: memory
    clock = TTL;
    expect(here.findByUriNow?.(r.context, r.path)).toBeUndefined();
    await expect(here.findByUri(r.context, r.path)).rejects.toBe(down);
    down = undefined;
    expect((await here.findByUri(r.context, r.path))?.uid).toBe(r.uid); // and recovers with it
  });

  it("drops a resource's rows at once on this instance's own update, delete, purge and lock", async () => {
    const r = await here.insert(row());
    const seen = async () => (await here.findByUri(r.context, r.path))?.revision;
    expect(await seen()).toBe(1);
    await take(here, r.uid);
    const afterLock = lookups;
    expect(await seen()).toBe(1);
    expect(lookups).toBe(afterLock + 1); // the lock dropped it: looked up again
    await here.update(change(r.uid), { author: "B" });
    expect(await seen()).toBe(2);
    await here.softDelete(change(r.uid, { expectedRevision: 2 }));
    expect((await here.findByUri(r.context, r.path))?.deletedAt).toBe(5000);
    await here.purge(r.uid, 7000);
    expect(await here.findByUri(r.context, r.path)).toBeNull();
  });

  it("drops a package's files with the package (they share its context)", async () => {
    const zip = row({ path: "p.zip", name: "p.zip" });
    const file = row({ context: zip.uid, parentUid: zip.uid, path: "index.html", name: "index.html" });
    await here.insertAll([zip, file]);
    await take(here, zip.uid);
    expect((await here.findByUri(zip.uid, "index.html"))?.deletedAt).toBeNull();
    await here.softDelete(change(zip.uid));
    expect((await here.findByUri(zip.uid, "index.html"))?.deletedAt).toBe(5000);
  });

  it("does not cache a lookup that was in flight across an own write (it may have read the old row)", async () => {
    const r = await here.insert(row());
    await take(here, r.uid);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A lookup that read the old row and answers only after the update committed.
    const slow = withRowCache(
      {
        ...base,
        findByUri: async (context, path) => {
          const found = await base.findByUri(context, path);
          await gate;
          return found;
        },
      },
      { rows: 10, ttlMs: TTL, now: () => clock },
    );
    const inFlight = slow.findByUri(r.context, r.path);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await slow.update(change(r.uid), { author: "B" });
    const afterWrite = slow.findByUri(r.context, r.path); // must not join the older lookup
    release();
    expect((await inFlight)?.author).toBe("A");
    expect((await afterWrite)?.author).toBe("B");
    expect((await slow.findByUri(r.context, r.path))?.author).toBe("B");
  });

  it("keeps a row that matches the URL's content version (?v=) up to the versioned bound", async () => {
    const r = await other.insert(row());
    await here.findByUri(r.context, r.path);
    await other.purge(r.uid, 6000);
    clock = VERSIONED_TTL - 1;
    expect((await here.findByUri(r.context, r.path, "01234567"))?.uid).toBe(r.uid); // content cannot be stale
    expect(here.findByUriNow?.(r.context, r.path, "01234567")?.uid).toBe(r.uid);
    expect(await here.findByUri(r.context, r.path, "ffffffff")).toBeNull(); // another version: asks
  });

  it("keeps a versioned row no longer than the versioned bound (a delete elsewhere is seen then)", async () => {
    const r = await other.insert(row());
    await here.findByUri(r.context, r.path, "01234567");
    await other.purge(r.uid, 6000);
    clock = VERSIONED_TTL;
    expect(await here.findByUri(r.context, r.path, "01234567")).toBeNull();
  });
});
