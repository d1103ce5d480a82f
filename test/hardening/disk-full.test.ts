/**
 * Suite 5 of issue 11: out of space. The volume and the database file live on a small tmpfs
 * (mounted by this test: it runs as root here; without root the mount is impossible and the suite
 * says so and simulates ENOSPC at the fs driver instead). Filled up, every create answers 507
 * INSUFFICIENT_STORAGE — whether the blob or the database row found no room — keeps no partial file
 * and no space, reads and /healthz go on, and creates succeed again once space returns. The same
 * for an S3 bucket that refuses to store more (a proxy in front of s3rver answers 507).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, readdir, rm, statfs } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import { parseConfig } from "../../src/config.js";
import { createJsonLogger } from "../../src/lib/logger.js";
import { createServerDeps } from "../../src/runtime/host/deps.js";
import { createServices } from "../../src/services/index.js";
import { type BlobStore, StorageError } from "../../src/storage/blob-store.js";
import { API, base64, type Client, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { forwardTo } from "../helpers/forward.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { report, scaled } from "./scale.js";

const ROUNDS = scaled(3, 30);
const TMPFS_BYTES = scaled(16, 64) * 1024 * 1024;
const SIZES = [1, 4_000, 300_000, 2_000_000];
const TENANT = "diskfull";
/** Room left for the nearly-full phase, and how many tiny creates are sent into it. */
const NEARLY_FULL_ROOM = 256 * 1024;
const TINY_CREATES = scaled(60, 400);

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Every file under `dir` (temp folders included), relative, sorted; not the `owner` marker of each
 * process's temp folder nor the volume's `.cms-owner` (driver bookkeeping written at start-up,
 * never a partial upload).
 */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter(
      (e) =>
        e.isFile() &&
        !(e.name === "owner" && e.parentPath.includes("/.tmp/")) &&
        !(e.name === ".cms-owner" && e.parentPath === dir),
    )
    .map((e) => join(e.parentPath, e.name).slice(dir.length))
    .sort();
}

const freeBytes = async (dir: string) => {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
};

/** Writes `file` until the file system refuses (ENOSPC); resolves with the bytes written. */
async function fillUp(file: string): Promise<number> {
  const handle = await open(file, "w");
  let written = 0;
  try {
    for (let chunk = 1024 * 1024; chunk >= 512; ) {
      try {
        const { bytesWritten } = await handle.write(Buffer.alloc(chunk, 7));
        written += bytesWritten;
        if (bytesWritten < chunk) chunk = Math.floor(chunk / 2);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
        chunk = Math.floor(chunk / 2);
      }
    }
  } finally {
    await handle.close();
  }
  return written;
}

function tryMountTmpfs(target: string, bytes: number): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", target], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

/** Unmounts, lazily if something still holds a file there (the test has failed then anyway). */
function unmount(target: string) {
  try {
    execFileSync("umount", [target], { stdio: "pipe" });
  } catch {
    execFileSync("umount", ["-l", target], { stdio: "pipe" });
  }
}

/**
 * Creates one resource per content (inline base64, so up to CMS_MAX_INLINE_BYTES; the server streams
 * it to the driver like an upload); the answers by status.
 */
async function createAll(cms: Client, round: number, contents: Uint8Array[]) {
  const statuses: Record<number, number> = {};
  const accepted: { uri: string; bytes: Uint8Array }[] = [];
  for (const [i, bytes] of contents.entries()) {
    const res = await cms.postCreate({ resourceName: `r${round}-${i}.bin` }, bytes);
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status === 201) accepted.push({ uri: ((await res.json()) as { resourceURI: string }).resourceURI, bytes });
    else await expectProblem(res, 507, "INSUFFICIENT_STORAGE");
  }
  return { statuses, accepted };
}

async function expectServed(cms: Client, accepted: { uri: string; bytes: Uint8Array }[]) {
  for (const { uri, bytes } of accepted) expect(sha256(await cms.data(uri))).toBe(sha256(bytes));
}

const dir = await mkdtemp(join(tmpdir(), "cms-diskfull-"));
const mountPoint = join(dir, "mnt");
await mkdir(mountPoint);
const mounted = tryMountTmpfs(mountPoint, TMPFS_BYTES);

if (mounted) {
  describe(`a full volume (tmpfs of ${TMPFS_BYTES >> 20} MiB holding the blobs and the database)`, () => {
    let app: TestApp;
    let cms: Client;
    const volume = join(mountPoint, "volume");
    const databaseFile = join(mountPoint, "cms.db");

    beforeAll(async () => {
      app = await startTestApp({ CMS_VOLUME: volume, CMS_DATABASE_URL: `file:${databaseFile}`, CMS_LOG_LEVEL: "warn" });
      cms = cmsClient(app, TENANT);
    });
    afterAll(async () => {
      await app?.close();
      unmount(mountPoint);
      await rm(dir, { recursive: true, force: true });
    });
    afterEach(() => expect(app.unhandledErrors()).toEqual([]));

    it("answers 507 for every create, keeps no partial file, stays healthy, and accepts again when space returns", async () => {
      const seedBytes = randomBytes(10_000);
      const seed = await cms.create({ resourceName: "seed.bin" }, seedBytes);
      const filler = join(mountPoint, "filler");
      const filled = await fillUp(filler);
      const filesWhenFull = await filesUnder(volume);
      const freeWhenFull = await freeBytes(mountPoint);

      const totals: Record<number, number> = {};
      const acceptedWhileFull: { uri: string; bytes: Uint8Array }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        // Fresh content (the blob cannot be written) and the seed's content again (the blob exists,
        // so only the database row needs room: SQLITE_FULL unless the WAL still had space).
        const contents = [...SIZES.map((n) => new Uint8Array(randomBytes(n))), seedBytes];
        const { statuses, accepted } = await createAll(cms, round, contents);
        for (const [status, n] of Object.entries(statuses)) totals[Number(status)] = (totals[Number(status)] ?? 0) + n;
        acceptedWhileFull.push(...accepted);
        expect((await fetch(app.url("/healthz"))).status).toBe(200);
        expect(sha256(await cms.data(seed.resourceURI))).toBe(sha256(seedBytes));
      }
      // Only the seed's content can ever be accepted while full (its blob exists).
      for (const { bytes } of acceptedWhileFull) expect(sha256(bytes)).toBe(sha256(seedBytes));
      expect(await filesUnder(volume)).toEqual(filesWhenFull);
      const freeAfterRefusals = await freeBytes(mountPoint);

      await rm(filler);
      const recovered = await createAll(
        cms,
        ROUNDS,
        SIZES.map((n) => new Uint8Array(randomBytes(n))),
      );
      expect(recovered.statuses).toEqual({ 201: SIZES.length });

      // Nearly full: tiny blobs still fit, so sooner or later the database's WAL is what finds no room.
      await fillUp(filler);
      const handle = await open(filler, "r+");
      await handle.truncate((await handle.stat()).size - NEARLY_FULL_ROOM);
      await handle.close();
      const tiny = Array.from({ length: TINY_CREATES }, () => new Uint8Array(randomBytes(16)));
      const nearlyFull = await createAll(cms, ROUNDS + 1, tiny);
      for (const [status, n] of Object.entries(nearlyFull.statuses))
        totals[Number(status)] = (totals[Number(status)] ?? 0) + n;
      expect(nearlyFull.statuses[507]).toBeGreaterThan(0);
      expect((await fetch(app.url("/healthz"))).status).toBe(200);
      await rm(filler);
      expect((await createAll(cms, ROUNDS + 2, tiny)).statuses).toEqual({ 201: tiny.length });
      await expectServed(cms, [...recovered.accepted, ...acceptedWhileFull, ...nearlyFull.accepted]);

      // No partial file, and no blob without a row: exactly the referenced blobs are on the volume.
      const db = createClient({ url: `file:${databaseFile}` });
      try {
        const { rows } = await db.execute("PRAGMA integrity_check");
        expect(rows[0]?.[0]).toBe("ok");
        const keys = await db.execute("select blob_key from resources union select blob_key from revisions");
        expect(await filesUnder(volume)).toEqual(keys.rows.map((r) => `/${String(r[0])}`).sort());
      } finally {
        db.close();
      }
      const outOfSpace = app.logs.filter((l) => l.msg === "out of space").map((l) => String(l.detail));
      report("disk-full", {
        driver: "fs",
        volume: "tmpfs",
        tmpfsMiB: TMPFS_BYTES >> 20,
        rounds: ROUNDS,
        nearlyFullAccepted: nearlyFull.statuses[201] ?? 0,
        creates: Object.values(totals).reduce((a, b) => a + b, 0),
        refused507: totals[507] ?? 0,
        accepted: totals[201] ?? 0,
        refusedByBlobStore: outOfSpace.filter((d) => d.startsWith("[fs]")).length,
        refusedByDatabase: outOfSpace.filter((d) => !d.startsWith("[fs]")).length,
        other: Object.entries(totals).filter(([s]) => s !== "201" && s !== "507").length,
        filledBytes: filled,
        freeBytesLost: freeWhenFull - freeAfterRefusals,
        tempFiles: (await filesUnder(volume)).filter((f) => f.startsWith("/.")).length,
        recoveredCreates: recovered.accepted.length,
      });
      expect(totals[507]).toBeGreaterThanOrEqual(ROUNDS * SIZES.length);
      expect(Object.keys(totals).sort()).toEqual(["201", "507"]);
    });
  });
} else {
  // Not root (or no mount allowed): ENOSPC is simulated at the fs driver — writes through the real
  // driver, whose put fails with the errno a full disk gives once a byte budget is spent.
  describe("a full volume, SIMULATED at the fs driver (this process cannot mount a tmpfs)", () => {
    let root: string;
    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), "cms-diskfull-sim-"));
    });
    afterAll(() => rm(root, { recursive: true, force: true }).then(() => rm(dir, { recursive: true, force: true })));

    it("answers 507 and keeps no partial file when the driver reports ENOSPC", async () => {
      const config = parseConfig({
        CMS_VOLUME: join(root, "volume"),
        CMS_DATABASE_URL: `file:${join(root, "cms.db")}`,
      });
      const deps = await createServerDeps(
        config,
        createJsonLogger(() => {}, "silent"),
      );
      let full = false;
      const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      const blobs: BlobStore = {
        ...deps.blobs,
        putContentAddressed: (body, keyFor, options) =>
          full
            ? Promise.reject(new StorageError("fs", "NO_SPACE", "write temp file failed: ENOSPC", { cause: enospc }))
            : deps.blobs.putContentAddressed(body, keyFor, options),
      };
      const simulated = { ...deps, blobs };
      const app = createApp(simulated, createServices(simulated));
      const create = () =>
        app.request(`${API}/createResource`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            resourceAuthor: "A",
            resourceMediaType: "text/plain",
            resourceName: "a.txt",
            resourceTenantId: TENANT,
            resourceBinary: base64(randomBytes(100)),
          }),
        });
      full = true;
      const refused = await create();
      await expectProblem(refused, 507, "INSUFFICIENT_STORAGE");
      expect((await app.request("/healthz")).status).toBe(200);
      full = false;
      const recovered = await create();
      expect(recovered.status).toBe(201);
      await deps.close();
      report("disk-full", {
        driver: "fs",
        volume: "simulated",
        refusedStatus: refused.status,
        recoveredStatus: recovered.status,
      });
    });
  });
}

/** A proxy in front of s3rver that, while `full`, refuses every upload as MinIO does on a full disk. */
async function startRefusingProxy(
  target: string,
): Promise<{ endpoint: string; setFull(full: boolean): void; close(): Promise<void> }> {
  const upstream = new URL(target);
  let full = false;
  const server: Server = createServer((req, res) => {
    if (full && (req.method === "PUT" || req.method === "POST")) {
      req.resume();
      req.on("end", () => {
        res.writeHead(507, { "content-type": "application/xml" });
        res.end(
          '<?xml version="1.0"?><Error><Code>XMinioStorageFull</Code><Message>Storage backend has reached its minimum free drive threshold.</Message></Error>',
        );
      });
      return;
    }
    forwardTo(upstream, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setFull: (value) => {
      full = value;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("an S3 bucket that refuses to store more (HTTP 507 XMinioStorageFull)", () => {
  let s3: S3TestServer;
  let proxy: Awaited<ReturnType<typeof startRefusingProxy>>;
  let app: TestApp;
  let cms: Client;

  beforeAll(async () => {
    s3 = await startS3Server();
    proxy = await startRefusingProxy(s3.endpoint);
    app = await startTestApp({
      ...s3Settings(s3, proxy.endpoint),
      CMS_LOG_LEVEL: "warn",
    });
    cms = cmsClient(app, TENANT);
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await s3?.close();
  });
  afterEach(() => expect(app.unhandledErrors()).toEqual([]));

  it("declares 507 on every storing write in the OpenAPI document", async () => {
    const doc = (await (await fetch(app.url("/openapi.json"))).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const verb of ["createResource", "uploadResource", "updateResource", "deleteResource", "lockResourceDTO"]) {
      expect(Object.keys(doc.paths[`/cms/v1.0/${verb}`]?.post?.responses ?? {}), verb).toContain("507");
    }
  });

  it("answers 507, leaves no object or pending upload, stays healthy, and accepts again when the bucket does", async () => {
    const seedBytes = randomBytes(5_000);
    const seed = await cms.create({ resourceName: "seed.bin" }, seedBytes);
    const keysBefore = await s3.objectKeys(s3.bucket);
    proxy.setFull(true);
    const { statuses } = await createAll(
      cms,
      0,
      SIZES.map((n) => new Uint8Array(randomBytes(n))),
    );
    expect(statuses).toEqual({ 507: SIZES.length });
    expect((await fetch(app.url("/healthz"))).status).toBe(200);
    expect(sha256(await cms.data(seed.resourceURI))).toBe(sha256(seedBytes));
    expect(await s3.objectKeys(s3.bucket)).toEqual(keysBefore);
    expect(await s3.pendingUploads(s3.bucket)).toEqual([]);
    proxy.setFull(false);
    const recovered = await createAll(
      cms,
      1,
      SIZES.map((n) => new Uint8Array(randomBytes(n))),
    );
    expect(recovered.statuses).toEqual({ 201: SIZES.length });
    await expectServed(cms, recovered.accepted);
    report("disk-full", {
      driver: "s3",
      refused507: statuses[507] ?? 0,
      leftObjects: 0,
      recoveredCreates: recovered.accepted.length,
    });
  });
});
