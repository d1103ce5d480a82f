/**
 * The blob lifetime protocol on a real migrated libSQL file and the in-memory blob store, with a
 * controllable clock: reservations wait for a deletion in progress and then store their own copy, a
 * dead collector's deletion is taken over, the database refuses rows whose blob is not reserved,
 * abandoned reservations, purges and orphans are collected only when the rules allow.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProblemError } from "../../src/problems.js";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { FINISH_LEASE_MS } from "../../src/metadata/tus-store.js";
import type { NewResourceRow } from "../../src/metadata/schema.js";
import { createBlobCollector, STALE_DOOM_MS, type BlobCollector } from "../../src/services/blob-collector.js";
import { createContentService, type ContentService } from "../../src/services/content.js";
import type { BlobKey, BlobStore } from "../../src/storage/blob-store.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { contentKey } from "../../src/storage/keys.js";
import { STAGING_MAX_AGE_MS, stagedAt, stagingKey } from "../../src/storage/staging.js";
import { resourceRow } from "../helpers/resource-row.js";
import { streamOf } from "../helpers/streams.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";

const GRACE_MS = 60_000;
const bytes = (text: string) => new TextEncoder().encode(text);
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

let temp: TempStore;
let store: MetadataStore;
let blobs: BlobStore;
let collector: BlobCollector;
let content: ContentService;
let clock: number;

beforeEach(async () => {
  temp = await tempStore("gc");
  store = createMetadataStore((await temp.open()).db); // not reserving: the tests reserve as content.put does
  blobs = createMemoryBlobStore();
  clock = 1_000_000;
  collector = createBlobCollector({ blobs, ledger: store.ledger, graceMs: GRACE_MS, now: () => clock });
  content = createContentService({ blobs, collector, maxResourceBytes: 1 << 20 });
});
afterEach(() => temp.close());

let seq = 0;
const rowFor = (blobKey: string, text: string): NewResourceRow => {
  return resourceRow(`id${++seq}-t`, {
    size: text.length,
    sha256: sha(text),
    blobKey,
    createdAt: clock,
    updatedAt: clock,
  });
};

/** What a create does: store (reserving), then insert the row (consuming the reservation). */
async function createWith(text: string) {
  const blob = await content.put("t", streamOf(bytes(text)), "/body");
  return { blob, row: await store.insert(rowFor(blob.key, text)) };
}

describe("blob lifetime", () => {
  it("a row insert consumes the reservation; a purge frees the blob at once", async () => {
    const { blob, row } = await createWith("purge me");
    expect(await store.ledger.find(blob.key)).toEqual({ pending: 0, doomedAt: null });
    const purged = await store.purge(row.uid, clock);
    expect(await content.collect(purged?.blobKeys ?? [])).toBe(1);
    expect(await blobs.head(blob.key)).toBeNull();
    expect(await store.ledger.find(blob.key)).toBeNull();
  });

  it("keeps a blob a create has reserved but not yet inserted, however the purge and the pass run", async () => {
    const { row } = await createWith("shared");
    const inFlight = await content.put("t", streamOf(bytes("shared")), "/body"); // deduplicated, reserved
    expect(inFlight.created).toBe(false);
    const purged = await store.purge(row.uid, clock);
    expect(await content.collect(purged?.blobKeys ?? [])).toBe(0);
    expect((await collector.pass()).removed).toBe(0);
    await store.insert(rowFor(inFlight.key, "shared"));
    expect(await blobs.head(inFlight.key)).not.toBeNull();
  });

  it("a reservation arriving during a deletion waits for it, then stores its own copy", async () => {
    const { blob, row } = await createWith("doomed");
    await store.purge(row.uid, clock);
    expect(await store.ledger.doom(blob.key, clock, clock - GRACE_MS)).toBe(true); // a collector's claim
    let settled = false;
    const put = content.put("t", streamOf(bytes("doomed")), "/body").finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false); // waiting while the blob is claimed
    await blobs.delete(blob.key); // the collector finishes
    await store.ledger.forget(blob.key, clock);
    const stored = await put;
    expect(stored.created).toBe(true);
    await store.insert(rowFor(stored.key, "doomed"));
    expect(await blobs.head(stored.key)).toMatchObject({ sha256: sha("doomed") });
  });

  it("takes over the deletion of a collector that died after claiming", async () => {
    const { blob, row } = await createWith("orphaned claim");
    await store.purge(row.uid, clock);
    expect(await store.ledger.doom(blob.key, clock, clock - GRACE_MS)).toBe(true); // and then nothing
    clock += STALE_DOOM_MS + 1;
    const stored = await content.put("t", streamOf(bytes("orphaned claim")), "/body");
    expect(stored.created).toBe(true); // the old copy was deleted, this one written
    await store.insert(rowFor(stored.key, "orphaned claim"));
    expect(await blobs.head(stored.key)).not.toBeNull();
  });

  it("does not wait for a deletion whose blob is already gone (its collector could not drop the ledger row)", async () => {
    const { blob, row } = await createWith("deleted, not forgotten");
    await store.purge(row.uid, clock);
    expect(await store.ledger.doom(blob.key, clock, clock - GRACE_MS)).toBe(true);
    await blobs.delete(blob.key); // then `forget` failed (e.g. the database file's disk was full)
    // The clock stands still: without the fix the put waits STALE_DOOM_MS, i.e. forever here.
    const stored = await Promise.race([
      content.put("t", streamOf(bytes("deleted, not forgotten")), "/body"),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the put waited for a finished deletion")), 2_000),
      ),
    ]);
    expect(stored.created).toBe(true);
    await store.insert(rowFor(stored.key, "deleted, not forgotten"));
    expect(await blobs.head(stored.key)).toMatchObject({ sha256: sha("deleted, not forgotten") });
  });

  it("the database refuses a row whose blob is claimed for deletion or unknown; the service answers 503", async () => {
    const { blob, row } = await createWith("refused");
    await store.purge(row.uid, clock);
    await store.ledger.doom(blob.key, clock, clock - GRACE_MS);
    const insert = store.insert(rowFor(blob.key, "refused"));
    await expect(insert).rejects.toThrow();
    const failure = content.insertFailure(await insert.catch((err: unknown) => err));
    expect(failure).toBeInstanceOf(ProblemError);
    expect(failure).toMatchObject({ status: 503, code: "UNAVAILABLE" });
    await expect(store.insert(rowFor("t/never/reserved", "x"))).rejects.toThrow();
  });

  it("collects an abandoned reservation (a create that died) only after the grace period", async () => {
    const blob = await content.put("t", streamOf(bytes("abandoned")), "/body"); // never inserted
    clock += GRACE_MS - 1;
    expect((await collector.pass()).removed).toBe(0);
    clock += 2;
    expect((await collector.pass()).removed).toBe(1);
    expect(await blobs.head(blob.key)).toBeNull();
  });

  it("a failed create's discard frees what only it needed, and leaves what others use", async () => {
    const { blob: used } = await createWith("in use");
    const again = await content.put("t", streamOf(bytes("in use")), "/body");
    const alone = await content.put("t", streamOf(bytes("only mine")), "/body");
    await content.discard([again, alone]);
    expect(await blobs.head(used.key)).not.toBeNull();
    expect(await blobs.head(alone.key)).toBeNull();
  });

  it("a purge whose inline collection never ran is collected by the next pass", async () => {
    const { blob, row } = await createWith("crashed after purge");
    await store.purge(row.uid, clock); // the process dies before collecting
    expect((await collector.pass()).removed).toBe(1);
    expect(await blobs.head(blob.key)).toBeNull();
  });

  it("never deletes a blob the ledger has no record of (another deployment's, or older data): sweeps only count it", async () => {
    const stranger = await contentKey("t", sha("not ours"));
    await blobs.put(stranger as BlobKey, streamOf(bytes("not ours")));
    const { blob: kept } = await createWith("kept");
    expect(await collector.sweep()).toBe(1);
    expect((await collector.pass()).removed).toBe(0);
    clock += GRACE_MS + 1;
    expect((await collector.pass()).removed).toBe(0);
    expect(await collector.sweep()).toBe(1);
    clock += 100 * GRACE_MS;
    expect((await collector.pass()).removed).toBe(0);
    // Handed the key directly (a purge's or a failed create's list), the collector still refuses it.
    expect(await collector.collect([stranger])).toBe(0);
    await collector.release(stranger);
    expect(await blobs.head(stranger)).not.toBeNull();
    expect(await store.ledger.find(stranger)).toBeNull();
    expect(await blobs.head(kept.key)).not.toBeNull();
  });

  it("a storage failure during a purge's collection fails nothing; a later pass finishes the deletion", async () => {
    const { blob, row } = await createWith("storage hiccup");
    const realDelete = blobs.delete.bind(blobs);
    blobs.delete = async () => {
      throw new Error("storage unreachable");
    };
    const purged = await store.purge(row.uid, clock);
    expect(await content.collect(purged?.blobKeys ?? [])).toBe(0); // no throw: the purge still answers
    blobs.delete = realDelete;
    expect(await blobs.head(blob.key)).not.toBeNull();
    clock += STALE_DOOM_MS + 1; // the failed claim is stale now
    expect((await collector.pass()).takenOver).toBe(1);
    expect(await blobs.head(blob.key)).toBeNull();
    expect(await store.ledger.find(blob.key)).toBeNull();
  });
});

describe("expired tus uploads", () => {
  const upload = async (id: string, expiresAt: number) => {
    const key = `tus/${id}/0` as BlobKey;
    await blobs.put(key, streamOf(bytes("part")));
    const reservation = {
      tenantId: "t",
      bytes: 10,
      resources: 0,
      ingressBytes: 0,
      day: 0,
      limits: { bytes: 0, resources: 0, ingressBytesPerDay: 0 },
    };
    await store.tusUploads.create(
      {
        id,
        tenantId: "t",
        fields: "{}",
        length: 10,
        offset: 4,
        parts: JSON.stringify([{ key, size: 4 }]),
        createdAt: clock,
        expiresAt,
      },
      reservation,
    );
    return key;
  };
  const keysUnder = async (prefix: string) => {
    const keys: string[] = [];
    for await (const key of blobs.list(prefix)) keys.push(key);
    return keys;
  };

  it("a pass removes every expired upload (row and parts) with nobody uploading, and keeps live ones", async () => {
    const sweeping = createBlobCollector({
      blobs,
      ledger: store.ledger,
      graceMs: GRACE_MS,
      now: () => clock,
      tusUploads: store.tusUploads,
    });
    const expiring = "a".repeat(32);
    const live = "b".repeat(32);
    await upload(expiring, clock + 1_000);
    await upload(live, clock + 3_600_000);

    expect((await sweeping.pass()).uploadsExpired).toBe(0);
    expect(await keysUnder(`tus/${expiring}/`)).toHaveLength(1);

    clock += 1_000;
    expect((await sweeping.pass()).uploadsExpired).toBe(1);
    expect(await store.tusUploads.find(expiring)).toBeNull();
    expect(await keysUnder(`tus/${expiring}/`)).toEqual([]);
    expect(await store.tusUploads.find(live)).not.toBeNull();
    expect(await keysUnder(`tus/${live}/`)).toHaveLength(1);
  });

  it("an upload claimed for finishing outlives its expiry by FINISH_LEASE_MS (its finisher may still run), then goes with its hold", async () => {
    const sweeping = createBlobCollector({
      blobs,
      ledger: store.ledger,
      graceMs: GRACE_MS,
      now: () => clock,
      tusUploads: store.tusUploads,
    });
    const id = "c".repeat(32);
    await upload(id, clock + 1_000);
    expect((await store.usage("t"))?.bytes).toBe(10);
    await store.tusUploads.advance(id, 4, 10, [], clock, clock + 1_000);
    expect(await store.tusUploads.claim(id, clock, clock + 1_000)).not.toBeNull();
    expect(await store.tusUploads.claim(id, clock, clock + 1_000)).toBeNull(); // exactly one claim
    expect(await store.tusUploads.terminate(id)).toBeNull(); // no termination while claimed

    clock += 1_000;
    expect((await sweeping.pass()).uploadsExpired).toBe(0);
    expect(await keysUnder(`tus/${id}/`)).toHaveLength(1);
    clock += FINISH_LEASE_MS;
    expect((await sweeping.pass()).uploadsExpired).toBe(1);
    expect(await store.tusUploads.find(id)).toBeNull();
    expect(await keysUnder(`tus/${id}/`)).toEqual([]);
    expect((await store.usage("t"))?.bytes).toBe(0);
  });
});

describe("staged files a crash left behind", () => {
  it("a pass removes staged blobs older than STAGING_MAX_AGE_MS and keeps younger ones and everything else", async () => {
    clock = 1_700_000_000_000;
    const put = async (key: BlobKey) => {
      await blobs.put(key, streamOf(bytes("staged")));
      return key;
    };
    const abandoned = await put(stagingKey("uploads", clock - STAGING_MAX_AGE_MS - 1));
    const inFlight = await put(stagingKey("uploads", clock - STAGING_MAX_AGE_MS + 60_000));
    const foreign = await put("staging/uploads/not-ours" as BlobKey); // no time in its name: not ours to judge
    const { blob } = await createWith("content");
    const figures = await collector.pass();
    expect(figures.stagedRemoved).toBe(1);
    expect(await blobs.head(abandoned)).toBeNull();
    for (const kept of [inFlight, foreign, blob.key]) expect(await blobs.head(kept)).not.toBeNull();
  });

  it("names each staged blob by the time it was made, under staging/<area>/", () => {
    const key = stagingKey("uploads", 1_700_000_000_000);
    expect(key).toMatch(/^staging\/uploads\/1700000000000-[0-9a-f]{32}$/);
    expect(stagedAt(key)).toBe(1_700_000_000_000);
    expect(stagedAt("staging/uploads/0123abcd")).toBeNull();
    expect(stagingKey("uploads", 1)).not.toBe(stagingKey("uploads", 1));
  });
});
