/**
 * The prepared getData lookup on a real migrated libSQL file, with its row cache (CMS_ROW_CACHE_ROWS)
 * and without: it answers what the store would, and a commit by any connection — this process's
 * writer or another process's — is seen from the next event-loop turn on (a client that waited for a
 * write's response never reads what it replaced), although reads of one turn share one snapshot.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import Database from "libsql";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MetadataStore } from "../../src/metadata/metadata-store.js";
import { withPreparedUriLookup } from "../../src/runtime/host/prepared-lookup.js";
import { resourceRow } from "../helpers/resource-row.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";

let temp: TempStore;
let store: MetadataStore;
let lookups: ReturnType<typeof withPreparedUriLookup>[];

beforeEach(async () => {
  temp = await tempStore("lookup");
  store = await temp.store();
  lookups = [];
});
afterEach(async () => {
  for (const lookup of lookups) lookup.close();
  await temp.close();
});

const open = (cacheRows: number) => {
  const lookup = withPreparedUriLookup(store, temp.file(), cacheRows);
  lookups.push(lookup);
  return lookup;
};

const row = resourceRow;

describe.each([
  ["cached", 10_000, "findByUri"],
  ["cached", 10_000, "findByUriNow"],
  ["uncached (CMS_ROW_CACHE_ROWS=0)", 0, "findByUri"],
  ["uncached (CMS_ROW_CACHE_ROWS=0)", 0, "findByUriNow"],
] as const)("%s getData lookup through %s", (_mode, cacheRows, via) => {
  let lookup: ReturnType<typeof withPreparedUriLookup>;
  beforeEach(() => {
    lookup = open(cacheRows);
  });
  /** The lookup under test: the promise, or the synchronous one the fast paths use (no await needed). */
  const find = (context: string, path: string) => {
    if (via === "findByUri") return lookup.findByUri(context, path);
    const found = lookup.findByUriNow?.(context, path);
    if (found === undefined) throw new Error("the prepared lookup has no synchronous findByUriNow");
    return found;
  };

  it("returns exactly the store's row, and null for an unknown URI", async () => {
    await store.insert(row("id0001-t"));
    expect(await find("id0001-t", "a.txt")).toEqual(await store.findByUri("id0001-t", "a.txt"));
    expect(await find("id0001-t", "b.txt")).toBeNull();
  });

  it("sees this process's writes from the next turn on: create after a miss, delete after a hit", async () => {
    expect(await find("id0002-t", "a.txt")).toBeNull(); // cached as missing
    await store.insert(row("id0002-t"));
    await nextTurn();
    const found = await find("id0002-t", "a.txt");
    expect(found?.deletedAt).toBeNull();

    await store.purge("id0002-t", 5000);
    await nextTurn();
    expect(await find("id0002-t", "a.txt")).toBeNull();
  });

  it("sees another connection's commit (another process) from the next turn on", async () => {
    await store.insert(row("id0003-t"));
    expect((await find("id0003-t", "a.txt"))?.size).toBe(1);
    const other = new Database(temp.file());
    try {
      other.prepare("UPDATE resources SET size = 42, deleted_at = 7 WHERE uid = ?").run("id0003-t");
    } finally {
      other.close();
    }
    await nextTurn();
    expect(await find("id0003-t", "a.txt")).toMatchObject({ size: 42, deletedAt: expect.anything() });
  });

  it("hands out rows no caller can change for the next one", async () => {
    await store.insert(row("id0004-t"));
    const found = await find("id0004-t", "a.txt");
    expect(Object.isFrozen(found)).toBe(true);
  });

  it("lets this process's writer commit while a turn's snapshot is open, and sees it from the next turn", async () => {
    await store.insert(row("id0005-t"));
    expect((await find("id0005-t", "a.txt"))?.size).toBe(1); // snapshot of this turn held
    await store.purge("id0005-t", 5000); // through this process's writer: must not meet SQLITE_BUSY
    await nextTurn();
    expect(await find("id0005-t", "a.txt")).toBeNull();
  });
});
