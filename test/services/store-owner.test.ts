/**
 * Who a blob store belongs to, decided at start-up, on a real fs volume and real libSQL files: the
 * first deployment (database) claims a new store, its other instances share it, any other database
 * is refused with one line naming the setting; a store from before the owner marker is claimed only
 * by a database that knows its blobs.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { claimBlobStore, StoreOwnedElsewhere } from "../../src/services/store-owner.js";
import type { BlobKey } from "../../src/storage/blob-store.js";
import { createFsBlobStore, type FsBlobStore } from "../../src/storage/drivers/fs.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { contentKey } from "../../src/storage/keys.js";
import { streamOf } from "../helpers/streams.js";

const label = { store: "the volume CMS_VOLUME=/srv/volume", setting: "CMS_VOLUME" };
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

let dir: string;
let volume: string;
const opened: { close(): void }[] = [];
const stores: FsBlobStore[] = [];

async function database(name: string): Promise<MetadataStore> {
  const db = await openDatabase({ CMS_DATABASE_URL: `file:${join(dir, `${name}.db`)}` });
  opened.push(db);
  return createMetadataStore(db.db);
}

async function store(): Promise<FsBlobStore> {
  const blobs = await createFsBlobStore({ root: volume });
  stores.push(blobs);
  return blobs;
}

/** A blob as a create of `metadata` leaves it: reserved in its ledger, then stored. */
async function storedBy(metadata: MetadataStore | null, text: string): Promise<BlobKey> {
  const key = await contentKey("t", sha(text));
  await metadata?.ledger.reserve(key, Date.now(), 60_000);
  await (await store()).put(key, streamOf(new TextEncoder().encode(text)));
  return key;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-owner-"));
  volume = join(dir, "volume");
});
afterEach(async () => {
  for (const db of opened.splice(0)) db.close();
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe("claimBlobStore", () => {
  it("the first deployment claims a new store; its instances, starting together, share it", async () => {
    const a = await database("a");
    await Promise.all([1, 2, 3].map(async () => claimBlobStore({ blobs: await store(), store: a, label })));
    const marker = JSON.parse(await readFile(join(volume, ".cms-owner"), "utf8")) as { deployment: string };
    expect(marker.deployment).toBe(await a.deploymentId());
    await claimBlobStore({ blobs: await store(), store: a, label }); // a restart
  });

  it("another database is refused, with one line naming the setting", async () => {
    await claimBlobStore({ blobs: await store(), store: await database("a"), label });
    const err = await claimBlobStore({ blobs: await store(), store: await database("b"), label }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreOwnedElsewhere);
    const message = (err as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toContain("the volume CMS_VOLUME=/srv/volume belongs to another deployment");
    expect(message).toMatch(/its own CMS_VOLUME/);
  });

  it("two deployments racing for a new store: exactly one wins", async () => {
    const [a, b] = [await database("a"), await database("b")];
    const results = await Promise.allSettled(
      [a, b, a, b].map(async (s) => claimBlobStore({ blobs: await store(), store: s, label })),
    );
    const won = results.map((r, i) => (r.status === "fulfilled" ? i % 2 : -1)).filter((i) => i >= 0);
    expect(new Set(won).size).toBe(1);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(2);
  });

  describe("a store from before the owner marker (content, no marker)", () => {
    it("is claimed by the database that recorded its blobs, whatever else it holds", async () => {
      const a = await database("a");
      await storedBy(a, "a's blob");
      await storedBy(null, "a blob nobody recorded");
      await claimBlobStore({ blobs: await store(), store: a, label });
      expect(await (await store()).owner()).toBe(await a.deploymentId());
    });

    it("is claimed by its database however many unrecorded blobs are listed before one of its own", async () => {
      const a = await database("a");
      const blobs = createMemoryBlobStore(); // lists in key order: the recorded key comes last
      for (let i = 0; i < 1200; i++)
        await blobs.put(`t/${"0".repeat(32)}/${String(i).padStart(4, "0")}` as BlobKey, streamOf());
      const ours = `t/${"f".repeat(32)}/mine` as BlobKey;
      await a.ledger.reserve(ours, Date.now(), 60_000);
      await blobs.put(ours, streamOf());
      await claimBlobStore({ blobs, store: a, label });
      expect(await blobs.owner()).toBe(await a.deploymentId());
    });

    it("is refused to a database that recorded none of its blobs, and stays unclaimed", async () => {
      await storedBy(await database("a"), "a's blob");
      const err = await claimBlobStore({ blobs: await store(), store: await database("b"), label }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StoreOwnedElsewhere);
      expect((err as Error).message).toMatch(
        /^the volume CMS_VOLUME=\/srv\/volume holds blobs this deployment's database has no record of.*its own CMS_VOLUME/,
      );
      expect(await (await store()).owner()).toBeNull();
    });

    it("an empty one is claimed by whoever comes first", async () => {
      const b = await database("b");
      await (await store()).put("tus/x/0" as BlobKey, streamOf(new TextEncoder().encode("part"))); // no content blob
      await claimBlobStore({ blobs: await store(), store: b, label });
      expect(await (await store()).owner()).toBe(await b.deploymentId());
    });
  });
});
