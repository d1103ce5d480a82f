/**
 * CMS_DATABASE_READ_URL's routing (metadata/read-replica.ts) on two real migrated libSQL files: a
 * primary, and a "replica" this test makes lag on purpose (rows it lacks, or an older state of one).
 * Serving reads (getData by URI, a numbered revision) come from the replica, a miss or a failed
 * replica goes to the primary, and every read that can decide a write reads the primary.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { withReadReplica } from "../../src/metadata/read-replica.js";
import { reservingStore } from "../helpers/reserving-store.js";
import { resourceRow } from "../helpers/resource-row.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";

let temp: TempStore;
let primary: MetadataStore;
let replica: MetadataStore;
let routed: MetadataStore;
let failures: unknown[];
let closers: (() => void)[];

beforeEach(async () => {
  temp = await tempStore("read-replica");
  const p = await temp.open("primary.db");
  const r = await temp.open("replica.db");
  closers = [p.close, r.close];
  primary = reservingStore(createMetadataStore(p.db));
  replica = reservingStore(createMetadataStore(r.db));
  failures = [];
  routed = withReadReplica(primary, replica, (err) => failures.push(err));
});
afterEach(() => temp.close());

const row = (uid: string, author: string) => resourceRow(uid, { author });

describe("reads with a read replica", () => {
  it("answers getData's lookup from the replica when it has the row (even an older state of it)", async () => {
    await primary.insert(row("id01-t", "new"));
    await replica.insert(row("id01-t", "old")); // the replica has not caught up with a change yet
    expect((await routed.findByUri("id01-t", "a.txt"))?.author).toBe("old");
    expect((await routed.revision("id01-t", 1))?.author).toBe("old");
  });

  it("asks the primary when the replica has no row, before anything answers 404", async () => {
    await primary.insert(row("id02-t", "primary"));
    expect((await routed.findByUri("id02-t", "a.txt"))?.author).toBe("primary");
    expect((await routed.revision("id02-t", 1))?.author).toBe("primary");
    expect(await routed.findByUri("id03-t", "a.txt")).toBeNull(); // on neither
  });

  it("asks the primary when the replica fails, and says so", async () => {
    await primary.insert(row("id04-t", "primary"));
    closers[1]?.(); // the replica's connection is gone
    closers[1] = () => {};
    expect((await routed.findByUri("id04-t", "a.txt"))?.author).toBe("primary");
    expect(failures.length).toBe(1);
  });

  it("reads the primary for everything that can decide a write: by UID, locks, lists, revision lists", async () => {
    await primary.insert(row("id05-t", "primary"));
    await replica.insert(row("id05-t", "replica"));
    await replica.locks.acquire({ name: "id05-t", lockId: "L", owner: "o", holder: null, expiresAt: 9e12, now: 0 });
    expect((await routed.findByUid("id05-t"))?.author).toBe("primary");
    expect(await routed.locks.find("id05-t", 1)).toBeNull();
    expect((await routed.list({ tenantId: "t", limit: 10 })).map((r) => r.author)).toEqual(["primary"]);
    expect((await routed.revisions("id05-t")).map((r) => r.author)).toEqual(["primary"]);
  });

  it("writes only to the primary", async () => {
    await routed.insert(row("id06-t", "written"));
    expect(await replica.findByUid("id06-t")).toBeNull();
    expect((await primary.findByUid("id06-t"))?.author).toBe("written");
  });
});
