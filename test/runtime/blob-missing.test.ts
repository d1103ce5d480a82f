/**
 * A row whose blob is gone from the store (issue 41 item 10: another deployment's purge deleted a
 * shared blob) answers 500 problem+json `BLOB_MISSING`, never a bare INTERNAL nor a 200 whose body
 * breaks off, on every read path: the app's route, the Node fast path (a real node:http server on
 * 127.0.0.1), the Bun fast path (a real `bun src/bun.ts` process), one range, several ranges,
 * a versioned URL; the operator's log names the key once. HEAD is answered from the row alone (no
 * storage call on the hot path, as S3's HEAD): test/budget/work-budget.json holds it to that.
 */
import { rm } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BlobKey } from "../../src/storage/blob-store.js";
import { createFsBlobStore } from "../../src/storage/drivers/fs.js";
import { contentKey } from "../../src/storage/keys.js";
import { API, type Client, cmsClient, expectProblem, type ResourceDto } from "../helpers/cms-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const MISSING_LOG = "blob missing under its row";

/** Deletes a resource's blob behind the service's back, as another deployment's purge did; its key. */
async function deleteBlob(volume: string, tenant: string, resource: ResourceDto): Promise<BlobKey> {
  const key = await contentKey(tenant, resource.sha256);
  const blobs = await createFsBlobStore({ root: volume });
  try {
    expect(await blobs.head(key)).not.toBeNull();
    await blobs.delete(key);
  } finally {
    await blobs.close();
  }
  return key;
}

/** Every read of `resource`, each through the fast path (plain) and through the app (`?via=app`). */
function reads(resource: ResourceDto): [string, string, RequestInit][] {
  const data = `${API}/getData/${resource.resourceURI}`;
  const plain: [string, string, RequestInit][] = [
    ["GET", data, {}],
    ["one range", data, { headers: { range: "bytes=0-3" } }],
    ["several ranges", data, { headers: { range: "bytes=0-1,4-5" } }],
    ["a versioned URL", `${data}?v=${resource.sha256.slice(0, 16)}`, {}],
  ];
  return plain.flatMap(([name, path, init]) => [
    [`${name} (fast path)`, path, init],
    [`${name} (app)`, `${path}${path.includes("?") ? "&" : "?"}via=app`, init],
  ]);
}

async function expectBlobMissing(res: Response, name: string) {
  if (res.headers.get("content-type") !== "application/problem+json" || res.status !== 500)
    throw new Error(`${name}: ${res.status} ${res.headers.get("content-type")}`);
  const problem = await expectProblem(res, 500, "BLOB_MISSING");
  expect(problem.detail, name).toMatch(/stored content .* is missing/);
}

describe("a row whose blob is missing, on Node", () => {
  let app: TestApp;
  let resource: ResourceDto;
  let key: BlobKey;

  beforeAll(async () => {
    // No small-blob cache: the bytes are never served from memory.
    app = await startTestApp({ CMS_BLOB_CACHE_BYTES: "0" });
    const client: Client = cmsClient(app, "missing");
    resource = await client.create({ resourceName: "gone.txt" }, "these bytes will be deleted");
    key = await deleteBlob(app.volume, "missing", resource);
  });
  afterAll(async () => {
    await app?.close();
  });

  it("answers 500 BLOB_MISSING to every read, and logs the key once", async () => {
    for (const [name, path, init] of reads(resource)) await expectBlobMissing(await app.fetch(path, init), name);
    const logged = app.logs.filter((l) => l.msg === MISSING_LOG);
    expect(logged).toEqual([expect.objectContaining({ level: "error", blobKey: key })]);
    expect(app.unhandledErrors()).toEqual([]);
  });
});

describe("a row whose blob is missing, on Bun", () => {
  let dir: string;
  let server: ServerProcess;
  let volume: string;
  let resource: ResourceDto;
  let client: Client;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-blob-missing-"));
    volume = join(dir, "volume");
    server = await spawnServer(
      { CMS_VOLUME: volume, CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`, CMS_BLOB_CACHE_BYTES: "0" },
      "bun",
    );
    client = cmsClient({ url: (path: string) => `${server.url}${path}` }, "missing");
    resource = await client.create({ resourceName: "gone.txt" }, "these bytes will be deleted");
    await deleteBlob(volume, "missing", resource);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers 500 BLOB_MISSING to every read, and logs the key once", async () => {
    for (const [name, path, init] of reads(resource))
      await expectBlobMissing(await fetch(`${server.url}${path}`, init), name);
    const logged = server.stdout.map((l) => JSON.parse(l) as { msg: string }).filter((l) => l.msg === MISSING_LOG);
    expect(logged).toHaveLength(1);
  });

  it("a blob file the fast path has sent before, gone since, answers BLOB_MISSING too", async () => {
    const sent = await client.create({ resourceName: "sent-then-gone.txt" }, "sent once, then deleted");
    const path = `${server.url}${API}/getData/${sent.resourceURI}`;
    expect(await (await fetch(path)).text()).toBe("sent once, then deleted"); // its file is known now
    await deleteBlob(volume, "missing", sent);
    await expectBlobMissing(await fetch(path), "GET of a known file");
    await expectBlobMissing(await fetch(path, { headers: { range: "bytes=0-3" } }), "a range of it");
  });
});
