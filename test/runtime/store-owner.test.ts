/**
 * Two deployments (two database files) pointed at one blob store, as real server processes: on an
 * fs volume and on an S3 bucket (s3rver) with the same CMS_S3_PREFIX. The second refuses to start
 * (exit 1, one line naming the setting, on Node and on Bun); a collector with its database, run
 * with any grace period, deletes none of the first's blobs; instances of the first start together;
 * a volume an older release filled is claimed only by the database that has its blobs.
 * R2 on workerd: test/runtime/store-owner-workerd.test.ts and test/workers/store-owner.test.ts.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetadataStore } from "../../src/metadata/metadata-store.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { createBlobCollector } from "../../src/services/blob-collector.js";
import type { BlobStore } from "../../src/storage/blob-store.js";
import { createFsBlobStore } from "../../src/storage/drivers/fs.js";
import { createS3BlobStore } from "../../src/storage/drivers/s3.js";
import { createTexts } from "../helpers/cms-client.js";
import { S3RVER_ACCESS_KEY_ID, type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { runUntilExit, type ServerProcess, type ServerRuntime, spawnServer } from "../helpers/spawn-server.js";

interface SharedStore {
  env: Record<string, string>;
  /** The setting the refusal must name. */
  setting: string;
  /** The store, opened directly (as a collector of the second deployment would). */
  open(): Promise<BlobStore>;
  close(): Promise<void>;
}

const stores: [string, (dir: string) => Promise<SharedStore>][] = [
  [
    "fs volume",
    async (dir) => ({
      env: { CMS_STORAGE: "fs", CMS_VOLUME: join(dir, "volume") },
      setting: "CMS_VOLUME",
      open: () => createFsBlobStore({ root: join(dir, "volume") }),
      close: async () => {},
    }),
  ],
  [
    "S3 bucket and prefix",
    async (dir) => {
      const s3: S3TestServer = await startS3Server();
      const prefix = "cms/";
      return {
        env: { ...s3Settings(s3), CMS_S3_PREFIX: prefix, CMS_VOLUME: join(dir, "unused-volume") },
        setting: "CMS_S3_PREFIX",
        open: async () =>
          createS3BlobStore({
            endpoint: s3.endpoint,
            bucket: s3.bucket,
            accessKeyId: S3RVER_ACCESS_KEY_ID,
            secretAccessKey: "S3RVER",
            prefix,
          }),
        close: () => s3.close(),
      };
    },
  ],
];

describe.each(stores)("two deployments on one %s", (_label, makeStore) => {
  let dir: string;
  let store: SharedStore;
  let first: ServerProcess;
  const blobs: { uri: string; text: string }[] = [];
  const envOf = (database: string) => ({ ...store.env, CMS_DATABASE_URL: `file:${join(dir, database)}` });

  /** Every blob of the first deployment, read through `server`. */
  async function expectAllServed(server: ServerProcess) {
    for (const { uri, text } of blobs) {
      const res = await fetch(`${server.url}/cms/v1.0/getData/${uri}`);
      expect(res.status, uri).toBe(200);
      expect(await res.text()).toBe(text);
    }
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-two-deployments-"));
    store = await makeStore(dir);
    first = await spawnServer(envOf("first.db"));
    blobs.push(
      ...(await createTexts(
        first.url,
        "first",
        Array.from({ length: 5 }, (_, i) => `the first deployment's blob ${i}`),
      )),
    );
  });
  afterAll(async () => {
    await first?.stop();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(["node", "bun"] as ServerRuntime[])(
    "the second deployment refuses to start on %s: exit 1, one line naming the setting",
    { timeout: 60_000 },
    async (runtime) => {
      const result = await runUntilExit(envOf(`second-${runtime}.db`), 30_000, runtime);
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^cannot start: .* belongs to another deployment .*give each deployment its own /);
      expect(lines[0]).toContain(store.setting);
      expect(result.stdout).not.toContain('"listening"');
      await expectAllServed(first);
    },
  );

  it("with CMS_WORKERS=2 the primary refuses before forking any worker: exit 1, one line", async () => {
    const result = await runUntilExit({ ...envOf("second-cluster.db"), CMS_WORKERS: "2" });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([expect.stringContaining(store.setting)]);
    expect(result.stdout).not.toContain("starting workers");
  });

  it("the first's blobs survive the second database's collector, whatever its grace period", async () => {
    await runUntilExit(envOf("second-collector.db")); // its database is migrated, its deployment id made
    const database = await openDatabase({ CMS_DATABASE_URL: `file:${join(dir, "second-collector.db")}` });
    const blobStore = await store.open();
    try {
      const collector = createBlobCollector({
        blobs: blobStore,
        ledger: createMetadataStore(database.db).ledger,
        graceMs: 0,
        now: () => Date.now() + 86_400_000,
      });
      expect(await collector.sweep()).toBe(blobs.length);
      const figures = await collector.pass();
      expect(figures.removed + figures.takenOver).toBe(0);
    } finally {
      database.close();
      await (blobStore as { close?: () => Promise<void> }).close?.();
    }
    await expectAllServed(first);
  });

  it("two more instances of the first deployment start together and serve its blobs", async () => {
    const instances = await Promise.all([spawnServer(envOf("first.db")), spawnServer(envOf("first.db"))]);
    try {
      for (const instance of instances) await expectAllServed(instance);
    } finally {
      await Promise.all(instances.map((i) => i.stop()));
    }
  });
});

describe("upgrading: a volume an older release filled (blobs, no owner marker)", () => {
  let dir: string;
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("another database is refused and leaves it unclaimed; the database that has its blobs claims it", {
    timeout: 60_000,
  }, async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-upgrade-"));
    const volume = join(dir, "volume");
    const envOf = (database: string) => ({ CMS_VOLUME: volume, CMS_DATABASE_URL: `file:${join(dir, database)}` });
    const old = await spawnServer(envOf("old.db"));
    const res = await fetch(`${old.url}/cms/v1.0/createResource`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceName: "o.txt",
        resourceTenantId: "old",
        resourceBinary: btoa("from before the marker"),
      }),
    });
    const { resourceURI } = (await res.json()) as { resourceURI: string };
    await old.stop();
    await rm(join(volume, ".cms-owner")); // as an older release left it

    const other = await runUntilExit(envOf("other.db"));
    expect(other.code).toBe(1);
    expect(other.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^cannot start: the volume CMS_VOLUME=.* holds blobs this deployment's database has no record of.*its own CMS_VOLUME/,
      ),
    ]);
    await expect(readFile(join(volume, ".cms-owner"))).rejects.toThrow(/ENOENT/);

    const upgraded = await spawnServer(envOf("old.db"));
    try {
      expect(await (await fetch(`${upgraded.url}/cms/v1.0/getData/${resourceURI}`)).text()).toBe(
        "from before the marker",
      );
      expect(JSON.parse(await readFile(join(volume, ".cms-owner"), "utf8"))).toEqual({
        deployment: expect.any(String),
      });
    } finally {
      await upgraded.stop();
    }
    expect((await runUntilExit(envOf("other.db"))).stderr).toMatch(/belongs to another deployment/);
  });
});
