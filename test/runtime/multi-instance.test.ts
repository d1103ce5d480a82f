/**
 * The multi-instance deployment on loopback: two Node server processes sharing one libSQL database
 * file and one blob store (an fs volume, then an S3 bucket on s3rver) both see each other's
 * resources, locks and signed links. Both start at once, so they also race to migrate the database.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Origin, patternBytes, startOrigin } from "../helpers/origin.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { processClient } from "../helpers/process-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface SharedStore {
  env: Record<string, string>;
  close(): Promise<void>;
}

const stores: [string, (dir: string) => Promise<SharedStore>][] = [
  [
    "one fs volume",
    async (dir) => ({ env: { CMS_STORAGE: "fs", CMS_VOLUME: join(dir, "volume") }, close: async () => {} }),
  ],
  [
    "one S3 bucket",
    async (dir) => {
      const s3: S3TestServer = await startS3Server();
      return {
        env: {
          ...s3Settings(s3),
          CMS_S3_PREFIX: "cms/",
          CMS_VOLUME: join(dir, "unused-volume"),
        },
        close: () => s3.close(),
      };
    },
  ],
];

describe.each(stores)("two Node instances sharing one libSQL database and %s", (_label, makeStore) => {
  let dir: string;
  let origin: Origin;
  let store: SharedStore;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-multi-"));
    origin = await startOrigin();
    store = await makeStore(dir);
    const env = {
      ...store.env,
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
      CMS_LINK_SECRET: "a-link-secret-shared-by-every-instance!",
      CMS_PUBLIC_URL: "https://cms.example.org", // links name the load balancer's origin, not an instance
    };
    // Started together on a fresh database: both migrate it at the same moment.
    [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await store?.close();
    await origin?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = (server: ServerProcess, verb: string, body: unknown) => processClient(server, "multi").post(verb, body);
  const create = (server: ServerProcess, name: string, bytes: Uint8Array) =>
    processClient(server, "multi").create({
      resourceBinary: undefined, // fetched from the origin instead
      resourceExternalURI: origin.put(`${name}-${Math.random().toString(36).slice(2)}`, bytes),
      resourceMediaType: "application/octet-stream",
      resourceName: name,
    });

  const data = async (server: ServerProcess, resourceURI: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/cms/v1.0/getData/${resourceURI}`, { headers });
    return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  it("the listening line names where blobs live: the volume, or the S3 bucket and prefix", async () => {
    const line = await a.waitForLine((l) => l.msg === "listening");
    const { CMS_STORAGE, CMS_VOLUME, CMS_S3_BUCKET, CMS_S3_PREFIX, CMS_S3_ENDPOINT } = store.env;
    if (CMS_STORAGE === "s3") {
      expect(line).toMatchObject({
        storage: "s3",
        bucket: CMS_S3_BUCKET,
        prefix: CMS_S3_PREFIX,
        endpoint: CMS_S3_ENDPOINT,
      });
      expect(line).not.toHaveProperty("volume"); // CMS_VOLUME is set but unused: naming it misleads
    } else expect(line).toMatchObject({ storage: "fs", volume: CMS_VOLUME });
  });

  it("each instance serves the resources created through the other", async () => {
    const fromA = patternBytes(0, 70_000);
    const fromB = patternBytes(3, 9_000);
    const ra = await create(a, "from-a.bin", fromA);
    const rb = await create(b, "from-b.bin", fromB);
    expect(sha256((await data(b, ra.resourceURI)).bytes)).toBe(sha256(fromA));
    expect(sha256((await data(a, rb.resourceURI)).bytes)).toBe(sha256(fromB));
    const range = await data(b, ra.resourceURI, { range: "bytes=65536-65545" });
    expect(range.status).toBe(206);
    expect(range.bytes).toEqual(fromA.slice(65536, 65546));
  });

  it("creates arriving at both instances at once all land, readable everywhere", async () => {
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        create(i % 2 ? a : b, `c${i}.txt`, new TextEncoder().encode(`content ${i}`)),
      ),
    );
    expect(new Set(created.map((r) => r.resourceUID)).size).toBe(20);
    for (const [i, r] of created.entries()) {
      const other = i % 2 ? b : a;
      expect(new TextDecoder().decode((await data(other, r.resourceURI)).bytes)).toBe(`content ${i}`);
    }
  });

  it("a lock taken through one instance holds on the other", async () => {
    const { resourceUID } = await create(a, "locked.txt", new TextEncoder().encode("locked"));
    const taken = await post(a, "lockResourceDTO", { resourceUID, author: "alice" });
    expect(taken.status, await taken.clone().text()).toBe(200);
    const { lockID } = (await taken.json()) as { lockID: string };

    const refused = await post(b, "lockResourceDTO", { resourceUID, author: "bob" });
    expect(refused.status).toBe(423);
    expect(((await refused.json()) as { code: string }).code).toBe("LOCKED");
    const seen = await post(b, "queryResourceLock", { uid: resourceUID });
    expect(seen.status).toBe(200);
    expect(await seen.json()).toMatchObject({ uid: resourceUID, lockOwner: "alice" });

    const released = await post(b, "unlockResourceDTO", { resourceUID, author: "alice", lockID });
    expect(released.status).toBe(204);
    const retaken = await post(a, "lockResourceDTO", { resourceUID, author: "bob" });
    expect(retaken.status).toBe(200);
  });

  it("a signed link minted by one instance works on the other (shared CMS_LINK_SECRET)", async () => {
    const { resourceURI } = await create(b, "linked.txt", new TextEncoder().encode("linked"));
    const res = await post(b, "createDataLink", { resourceURI, expiresIn: 60 });
    expect(res.status).toBe(200);
    const link = new URL(((await res.json()) as { url: string }).url);
    const served = await fetch(`${a.url}${link.pathname}${link.search}`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe("linked");
  });
});
