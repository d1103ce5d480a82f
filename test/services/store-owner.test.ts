/**
 * Who a blob store belongs to, decided at start-up. The decision itself (decideOwner) case by case;
 * then claimBlobStore on a real fs volume and real libSQL files: the first deployment (database)
 * claims a new store, its other instances share it, any other database is refused with one line
 * naming the setting; a store holding blobs but no marker is taken only when CMS_STORE_TAKEOVER
 * names the deployment (issue 41 item 10), logged. The one real process (exit 1, one line):
 * test/runtime/store-owner.test.ts; the Worker's 503: test/workers/store-owner.test.ts.
 */
import cluster from "node:cluster";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config.js";
import { createJsonLogger } from "../../src/lib/logger.js";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import { storeLabelOf } from "../../src/runtime/host/blob-storage.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { runPrimary } from "../../src/runtime/host/workers.js";
import { claimBlobStore, decideOwner, type OwnerFacts, StoreOwnedElsewhere } from "../../src/services/store-owner.js";
import type { BlobKey } from "../../src/storage/blob-store.js";
import { createFsBlobStore, type FsBlobStore } from "../../src/storage/drivers/fs.js";
import { contentKey } from "../../src/storage/keys.js";
import { streamOf } from "../helpers/streams.js";
import { startTestApp } from "../helpers/test-app.js";

const label = { store: "the volume CMS_VOLUME=/srv/volume", setting: "CMS_VOLUME" };
const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("decideOwner", () => {
  const facts = (over: Partial<OwnerFacts>): OwnerFacts => ({
    id: "this-db",
    owner: null,
    holdsContent: false,
    takeover: undefined,
    label,
    ...over,
  });
  const refusal = (over: Partial<OwnerFacts>) => {
    const decision = decideOwner(facts(over));
    if (decision.action !== "refuse") throw new Error(`expected a refusal, got ${decision.action}`);
    expect(decision.message).not.toContain("\n");
    return decision.message;
  };

  it("a store whose marker names this deployment is used, whatever it holds or the takeover says", () => {
    for (const takeover of [undefined, "this-db", "other-db"])
      expect(decideOwner(facts({ owner: "this-db", holdsContent: true, takeover }))).toEqual({ action: "use" });
  });

  it("a store another deployment's marker names is refused, naming both databases and the setting; a takeover does not apply", () => {
    for (const takeover of [undefined, "this-db"]) {
      expect(refusal({ owner: "other-db", holdsContent: true, takeover })).toBe(
        "the volume CMS_VOLUME=/srv/volume belongs to another deployment (database other-db; this database is this-db): give each deployment its own CMS_VOLUME",
      );
    }
  });

  it("a store without a marker or content blobs is claimed by whoever comes first", () => {
    for (const takeover of [undefined, "other-db"])
      expect(decideOwner(facts({ takeover }))).toEqual({ action: "claim" });
  });

  it("a store with content blobs but no marker is refused, saying how to take it on purpose and naming the setting", () => {
    expect(refusal({ holdsContent: true })).toMatch(
      /^the volume CMS_VOLUME=\/srv\/volume holds blobs but no owner marker .*start it once with CMS_STORE_TAKEOVER=this-db .*its own CMS_VOLUME$/,
    );
  });

  it("a takeover naming another deployment takes nothing, and the refusal says so", () => {
    expect(refusal({ holdsContent: true, takeover: "other-db" })).toContain(
      "(CMS_STORE_TAKEOVER=other-db names another deployment, not this one)",
    );
  });

  it("a takeover naming this deployment takes a store with content blobs but no marker", () => {
    expect(decideOwner(facts({ holdsContent: true, takeover: "this-db" }))).toEqual({ action: "take" });
  });

  it("an S3 store is named by its bucket and prefix, and the setting to change is CMS_S3_PREFIX", () => {
    const config = parseConfig({
      CMS_STORAGE: "s3",
      CMS_S3_ENDPOINT: "http://127.0.0.1:9000",
      CMS_S3_BUCKET: "cms",
      CMS_S3_ACCESS_KEY_ID: "k",
      CMS_S3_SECRET_ACCESS_KEY: "s",
      CMS_S3_PREFIX: "a/",
    });
    expect(storeLabelOf(config)).toEqual({
      store: 'the bucket CMS_S3_BUCKET=cms with CMS_S3_PREFIX="a/"',
      setting: "CMS_S3_PREFIX",
    });
  });
});

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

/** A logger keeping its lines. */
function keptLog() {
  const lines: { level: string; msg: string; [field: string]: unknown }[] = [];
  return { lines, logger: createJsonLogger((line) => lines.push(JSON.parse(line)), "info") };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-owner-"));
  volume = join(dir, "volume");
});
afterEach(async () => {
  vi.restoreAllMocks();
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
    expect((err as Error).message).toMatch(/^the volume CMS_VOLUME=\/srv\/volume belongs to another deployment/);
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

  it("an empty one (no content blob) is claimed by whoever comes first", async () => {
    const b = await database("b");
    await (await store()).put("tus/x/0" as BlobKey, streamOf(new TextEncoder().encode("part"))); // no content blob
    await claimBlobStore({ blobs: await store(), store: b, label });
    expect(await (await store()).owner()).toBe(await b.deploymentId());
  });

  describe("a store holding blobs but no marker", () => {
    it("is not adopted by a deployment that stored one identical blob (issue 41 item 10)", async () => {
      const [a, b] = [await database("a"), await database("b")];
      await claimBlobStore({ blobs: await store(), store: a, label });
      await storedBy(a, "a's own blob");
      const shared = await storedBy(a, "the same file, stored by both");
      await storedBy(b, "the same file, stored by both"); // the same tenant: the same content-addressed key
      await rm(join(volume, ".cms-owner")); // a copy or restore that skipped dot files

      const err = await claimBlobStore({ blobs: await store(), store: b, label }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreOwnedElsewhere);
      expect(await (await store()).owner()).toBeNull();
      expect(await (await store()).head(shared)).not.toBeNull();
    });

    it("is not adopted even by the database that recorded every one of its blobs, nor by a takeover naming another", async () => {
      const a = await database("a");
      await storedBy(a, "a's blob");
      for (const takeover of [undefined, "some-other-deployment"]) {
        const err = await claimBlobStore({ blobs: await store(), store: a, label, takeover }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StoreOwnedElsewhere);
        expect((err as Error).message).toContain(`CMS_STORE_TAKEOVER=${await a.deploymentId()}`);
      }
      expect(await (await store()).owner()).toBeNull();
    });

    it("is taken by the deployment CMS_STORE_TAKEOVER names, logged as a warning; then refused to others", async () => {
      const [a, b] = [await database("a"), await database("b")];
      await storedBy(null, "a blob nobody recorded");
      const { lines, logger } = keptLog();
      const id = await a.deploymentId();
      await claimBlobStore({ blobs: await store(), store: a, label, takeover: id, logger });
      expect(await (await store()).owner()).toBe(id);
      expect(lines).toEqual([
        expect.objectContaining({
          level: "warn",
          msg: "blob store without an owner marker taken over",
          store: label.store,
          deployment: id,
          setting: "CMS_STORE_TAKEOVER",
        }),
      ]);
      await claimBlobStore({ blobs: await store(), store: a, label, takeover: id, logger }); // a restart: nothing taken
      expect(lines).toHaveLength(1);
      await expect(claimBlobStore({ blobs: await store(), store: b, label })).rejects.toThrow(
        /belongs to another deployment/,
      );
    });
  });

  it("CMS_STORE_TAKEOVER reaches the claim: the app starts on the store it names this deployment for, and logs it", async () => {
    await storedBy(null, "a blob from before the restore");
    const databaseUrl = `file:${join(dir, "a.db")}`;
    const id = await (await database("a")).deploymentId();
    const app = await startTestApp(
      { CMS_VOLUME: volume, CMS_DATABASE_URL: databaseUrl, CMS_STORE_TAKEOVER: id },
      { transport: "in-process" },
    );
    try {
      expect(app.logs.filter((l) => l.msg === "blob store without an owner marker taken over")).toHaveLength(1);
      expect((await app.fetch("/readyz")).status).toBe(200);
      expect(await (await store()).owner()).toBe(id);
    } finally {
      await app.close();
    }
  });

  it("the cluster primary refuses before forking any worker", async () => {
    await claimBlobStore({ blobs: await store(), store: await database("a"), label });
    const fork = vi.spyOn(cluster, "fork").mockImplementation(() => {
      throw new Error("forked a worker for a store owned elsewhere");
    });
    const config = parseConfig({ CMS_VOLUME: volume, CMS_DATABASE_URL: `file:${join(dir, "b.db")}` });
    await expect(runPrimary(config, 2, keptLog().logger)).rejects.toThrow(StoreOwnedElsewhere);
    expect(fork).not.toHaveBeenCalled();
  });
});
