/**
 * The one real-process case of store ownership: a deployment started on a volume that holds blobs
 * but no owner marker (a restore that skipped dot files) stops before listening, with exit code 1
 * and one line telling the operator what to set; the store stays unclaimed. Node and Bun share this
 * start-up and its report (runtime/host/bootstrap.ts `start`/`fail`). Every decision, the claim on
 * a real volume and database, the cluster primary and the CMS_STORE_TAKEOVER setting:
 * test/services/store-owner.test.ts; the Worker: test/workers/store-owner.test.ts.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetadataStore } from "../../src/metadata/metadata-store.js";
import { openDatabase } from "../../src/runtime/host/database.js";
import { createFsBlobStore } from "../../src/storage/drivers/fs.js";
import { contentKey } from "../../src/storage/keys.js";
import { streamOf } from "../helpers/streams.js";
import { runUntilExit } from "../helpers/spawn-server.js";

describe("a volume holding blobs but no owner marker", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-owner-process-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a deployment starting on it exits 1 with one line naming CMS_STORE_TAKEOVER and the setting; nothing is claimed", {
    timeout: 30_000,
  }, async () => {
    const volume = join(dir, "volume");
    const text = "another deployment's file";
    const blobs = await createFsBlobStore({ root: volume });
    const key = await contentKey("t", createHash("sha256").update(text).digest("hex"));
    await blobs.put(key, streamOf(new TextEncoder().encode(text)));
    await blobs.close();

    const databaseUrl = `file:${join(dir, "second.db")}`;
    const result = await runUntilExit({ CMS_VOLUME: volume, CMS_DATABASE_URL: databaseUrl });
    expect(result.code).toBe(1);
    const database = await openDatabase({ CMS_DATABASE_URL: databaseUrl });
    const id = await createMetadataStore(database.db).deploymentId(); // made by the process before it refused
    database.close();
    expect(result.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^cannot start: the volume CMS_VOLUME=.* holds blobs but no owner marker .*CMS_STORE_TAKEOVER=${id} .*its own CMS_VOLUME$`,
        ),
      ),
    ]);
    expect(result.stdout).not.toContain('"listening"');
    expect(await readdir(volume)).not.toContain(".cms-owner");
  });
});
