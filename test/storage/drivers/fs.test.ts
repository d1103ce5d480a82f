// Runs the blob-store conformance suite against the fs driver, plus fs-only guarantees: temp-file
// hygiene, start-up sweep, on-disk layout, clear failures on unwritable roots, read backpressure.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, utimes, writeFile } from "node:fs/promises";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, type BlobFile, type BlobKey } from "../../../src/storage/blob-store.js";
import { createFsBlobStore, type FsBlobStore } from "../../../src/storage/drivers/fs.js";
import { contentKey, contentKeyUnder, parseBlobKey, tenantPrefix } from "../../../src/storage/keys.js";
import { streamOf } from "../../helpers/streams.js";
import { fsyncsDuring } from "../../helpers/fsync-spy.js";
import { describeBlobStore } from "../blob-store.contract.js";

/** The fs driver's header line before each blob's bytes (`crs-blob/1 sha256=<64 hex>\n`). */
const HEADER_BYTES = 83;
const KiB = 1024;
const MiB = 1024 * KiB;

const makeRoot = () => mkdtemp(path.join(tmpdir(), "fs-blobs-"));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const bytesOf = (text: string) => new TextEncoder().encode(text);

describeBlobStore("fs", async () => {
  const root = await makeRoot();
  return { store: await createFsBlobStore({ root }), cleanup: () => rm(root, { recursive: true, force: true }) };
});

/** `total` bytes in `chunkSize` chunks, produced only when pulled. */
function zeros(total: number, chunkSize: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const n = Math.min(chunkSize, total - sent);
        controller.enqueue(new Uint8Array(n).fill(sent / chunkSize));
        sent += n;
        if (sent >= total) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

async function readText(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}

/** Files under `dir`, relative, recursively (dot-entries included). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe("fs driver extras", () => {
  let root: string;
  let store: FsBlobStore;

  beforeEach(async () => {
    root = await makeRoot();
    store = await createFsBlobStore({ root });
  });
  afterEach(async () => {
    await chmod(root, 0o755).catch(() => {});
    await rm(root, { recursive: true, force: true });
  });

  it("stores of several processes on one volume: racing owner claims, exactly one written whole, no temp file left", async () => {
    const others = await Promise.all([1, 2, 3].map(() => createFsBlobStore({ root })));
    const stores = [store, ...others];
    const answers = await Promise.all(stores.map((s, i) => s.claimOwner(`deployment-${i}`)));
    expect(new Set(answers).size).toBe(1);
    expect(await readFile(path.join(root, ".cms-owner"), "utf8")).toBe(`{"deployment":"${answers[0]}"}\n`);
    expect((await tmpEntries()).filter((e) => e.endsWith(".owner"))).toEqual([]);
    await Promise.all(others.map((s) => s.close()));
  });

  /** Temp entries: loose ones in `.tmp/`, and upload files in the per-process folders (owner markers excluded). */
  const tmpEntries = async () => {
    const entries = await readdir(path.join(store.root, ".tmp"), { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => !(e.isDirectory() && e.parentPath.endsWith(".tmp")) && e.name !== "owner")
      .map((e) => path.relative(path.join(store.root, ".tmp"), path.join(e.parentPath, e.name)))
      .filter((name) => !name.includes(path.sep) || !name.endsWith(path.sep))
      .sort();
  };

  it("leaves no temp files after success, failure or abort", async () => {
    const k = parseBlobKey("hygiene");
    await store.put(k, streamOf(bytesOf("ok")));
    await rejection(store.put(k, zeros(2 * MiB, 64 * KiB), { maxBytes: MiB }));
    await rejection(store.put(k, streamOf(bytesOf("x")), { expectedSha256: "0".repeat(64) }));
    const aborted = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("socket hang up"));
      },
    });
    await rejection(store.put(k, aborted));
    const prefix = await tenantPrefix("t1");
    const keyFor = ({ sha256 }: { sha256: string }) => contentKeyUnder(prefix, sha256);
    await store.putContentAddressed(streamOf(bytesOf("dup")), keyFor);
    await store.putContentAddressed(streamOf(bytesOf("dup")), keyFor); // dropped as duplicate
    await rejection(store.putContentAddressed(streamOf(bytesOf("bad key")), () => "../x" as BlobKey));
    expect(await tmpEntries()).toEqual([]);
    expect(await readText((await store.get(k))!.body)).toBe("ok");
  });

  it("sweeps stale temp files at start-up and keeps fresh ones (possibly live uploads)", async () => {
    const tmp = path.join(store.root, ".tmp");
    await writeFile(path.join(tmp, "crashed.part"), "half an upload");
    await mkdir(path.join(tmp, "odd-dir"));
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(path.join(tmp, "crashed.part"), twoHoursAgo, twoHoursAgo);
    await utimes(path.join(tmp, "odd-dir"), twoHoursAgo, twoHoursAgo);
    await writeFile(path.join(tmp, "in-flight.part"), "still uploading");

    const reopened = await createFsBlobStore({ root });
    expect(await tmpEntries()).toEqual(["in-flight.part"]);
    expect(await reopened.sweepTemp({ olderThanMs: 0 })).toBe(1);
    expect(await tmpEntries()).toEqual([]);
  });

  it("removes a dead process's temp folder at the next start-up, however young, and keeps a live one's", async () => {
    const tmp = path.join(store.root, ".tmp");
    const procStart = async (pid: number) => {
      const stat = await readFile(`/proc/${pid}/stat`, "latin1").catch(() => null);
      return stat === null ? null : (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null);
    };
    // A child that exits at once: its pid is dead (or reused with another start time) afterwards.
    const dead = spawn(process.execPath, ["-e", ""]);
    const deadPid = dead.pid as number;
    const deadStart = await procStart(deadPid);
    await new Promise((resolve) => dead.once("exit", resolve));
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      const livePid = live.pid as number;
      for (const [name, pid, start] of [
        ["crashed", deadPid, deadStart ?? "0"],
        ["running", livePid, await procStart(livePid)],
      ] as const) {
        await mkdir(path.join(tmp, name));
        await writeFile(path.join(tmp, name, "owner"), JSON.stringify({ host: hostname(), pid, start }));
        await writeFile(path.join(tmp, name, "upload.part"), "half an upload");
      }
      const before = await tmpEntries();
      expect(before).toEqual([path.join("crashed", "upload.part"), path.join("running", "upload.part")]);
      await createFsBlobStore({ root }); // the start-up sweep
      expect(await tmpEntries()).toEqual([path.join("running", "upload.part")]);
    } finally {
      live.kill("SIGKILL");
    }
  });

  it("writes uploads inside its own marked folder, which its own sweep never removes", async () => {
    const tmp = path.join(store.root, ".tmp");
    const [own] = await readdir(tmp);
    const owner = JSON.parse(await readFile(path.join(tmp, own as string, "owner"), "utf8"));
    expect(owner).toMatchObject({ host: hostname(), pid: process.pid });
    expect(await store.sweepTemp({ olderThanMs: 0 })).toBe(0);
    await store.put(parseBlobKey("after-sweep"), streamOf(bytesOf("still works")));
    expect(await readText((await store.get(parseBlobKey("after-sweep")))!.body)).toBe("still works");
  });

  it("lays blobs out in fan-out directories with no tenant text in paths", async () => {
    const tenant = "acme-corp";
    const bytes = bytesOf("laid out");
    const prefix = await tenantPrefix(tenant);
    const { key, sha256 } = await store.putContentAddressed(streamOf(bytes), (info) =>
      contentKeyUnder(prefix, info.sha256),
    );
    expect(key).toBe(await contentKey(tenant, sha256));
    const relative = path.join(...key.split("/"));
    expect((await filesUnder(store.root)).filter((f) => !f.startsWith(".tmp"))).toEqual([relative]);
    expect(relative).toBe(path.join("t", prefix.slice(2, -1), sha256.slice(0, 2), sha256.slice(2, 4), sha256));
    expect(relative).not.toContain(tenant);
    // The file holds a one-line sha256 header, then the content verbatim.
    const onDisk = await readFile(path.join(store.root, relative), "latin1");
    expect(onDisk).toBe(`crs-blob/1 sha256=${sha256}\nlaid out`);
  });

  it("keeps each key's path: a key read again past the kept paths' limit finds its own file, an invalid key is refused every time", async () => {
    const k = parseBlobKey("plain/kept.txt");
    await store.put(k, streamOf(bytesOf("kept")));
    const expected = path.join(store.root, "plain", "kept.txt");
    expect((await store.localFile(k))?.path).toBe(expected);
    // More keys than the store keeps paths for (2 048): its paths are dropped on the way, k's too.
    for (let i = 0; i < 2100; i++) expect(await store.localFile(parseBlobKey(`other/${i}`))).toBeNull();
    expect((await store.localFile(k))?.path).toBe(expected);
    for (const bad of ["plain/../../etc", "plain/../../etc", "/etc/passwd"]) {
      await expect(store.localFile(bad as BlobKey)).rejects.toMatchObject({ code: "INVALID_KEY" });
    }
  });

  it("knows size and sha256 of any key after a restart (hash stored with the content)", async () => {
    const k = parseBlobKey("plain/name.txt");
    const info = await store.put(k, streamOf(bytesOf("persisted")));
    const reopened = await createFsBlobStore({ root });
    expect(await reopened.head(k)).toEqual(info);
  });

  /** FileHandle syncs (files and directories alike) while `run` runs. */
  const syncsDuring = async (run: () => Promise<unknown>) => (await fsyncsDuring(root, run)).length;

  describe("a put with durable: false (a cache's write: image derivatives)", () => {
    const cacheKey = parseBlobKey("img/ab/cd/w320.webp");
    const body = bytesOf("a derivative's bytes, made again at will");

    it("is not flushed to disk before it resolves, where a durable put is", async () => {
      expect(await syncsDuring(() => store.put(parseBlobKey("durable/one"), streamOf(body)))).toBeGreaterThan(0);
      expect(await syncsDuring(() => store.put(cacheKey, streamOf(body), { durable: false }))).toBe(0);
      // Still atomic and whole: read back at once, and by a restarted driver.
      expect(await readText((await store.get(cacheKey))!.body)).toBe(new TextDecoder().decode(body));
      const reopened = await createFsBlobStore({ root });
      const info = await reopened.head(cacheKey);
      expect(info).toEqual({ size: body.byteLength, sha256: createHash("sha256").update(body).digest("hex") });
      expect(await readText((await reopened.get(cacheKey))!.body)).toBe(new TextDecoder().decode(body));
    });

    it("holds for a content-addressed put too", async () => {
      const prefix = await tenantPrefix("lazy");
      const keyFor = ({ sha256 }: { sha256: string }) => contentKeyUnder(prefix, sha256);
      const syncs = await syncsDuring(() => store.putContentAddressed(streamOf(body), keyFor, { durable: false }));
      expect(syncs).toBe(0);
      const key = keyFor({ sha256: createHash("sha256").update(body).digest("hex") });
      expect(await readText((await (await createFsBlobStore({ root })).get(key))!.body)).toBe(
        new TextDecoder().decode(body),
      );
    });

    // What a crash of the machine may leave of a file renamed into place before its data reached
    // the disk: its length cut short, or its blocks never written (zeros).
    const damages: [string, (file: string) => Promise<void>][] = [
      ["cut short", (file) => truncate(file, HEADER_BYTES + 5)],
      [
        "its bytes zeroed",
        async (file) => {
          const whole = await readFile(file);
          whole.fill(0, HEADER_BYTES);
          await writeFile(file, whole);
        },
      ],
    ];
    for (const [damage, harm] of damages) {
      it(`${damage} by a crash: a restarted driver finds no blob there, never serves it`, async () => {
        await store.put(cacheKey, streamOf(body), { durable: false });
        await harm((await store.localFile(cacheKey))!.path);
        const reopened = await createFsBlobStore({ root });
        expect(await reopened.head(cacheKey)).toBeNull();
        expect(await reopened.get(cacheKey)).toBeNull();
        expect(await reopened.openFile(cacheKey)).toBeNull();
        // Put again, it is a blob like any other.
        await reopened.put(cacheKey, streamOf(body), { durable: false });
        expect(await readText((await reopened.get(cacheKey))!.body)).toBe(new TextDecoder().decode(body));
      });
    }

    it("a durable blob is not hashed when opened: its header is trusted, as before", async () => {
      const k = parseBlobKey("durable/two");
      await store.put(k, streamOf(body));
      await truncate((await store.localFile(k))!.path, HEADER_BYTES + 5);
      const reopened = await createFsBlobStore({ root });
      expect(await reopened.head(k)).toEqual({ size: 5, sha256: createHash("sha256").update(body).digest("hex") });
    });
  });

  it("localFile names the file slice holding a blob's content (for Bun's sendfile)", async () => {
    const k = parseBlobKey("sliced/blob.bin");
    const content = bytesOf("0123456789abcdef");
    await store.put(k, streamOf(content));
    const file = await store.localFile(k);
    expect(file).toMatchObject({ size: content.byteLength });
    const onDisk = await readFile(file!.path);
    expect(new TextDecoder().decode(onDisk.subarray(file!.offset, file!.offset + file!.size))).toBe("0123456789abcdef");
    expect(await store.localFile(parseBlobKey("sliced/missing"))).toBeNull();
    expect(await store.localFile(parseBlobKey("sliced"))).toBeNull(); // a fan-out directory
  });

  it("reports a file without a valid header as an IO error, not as content", async () => {
    await writeFile(path.join(store.root, "foreign"), "not written by the driver");
    const err = await rejection(store.head(parseBlobKey("foreign")));
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe("IO");
  });

  it("a reader keeps its bytes when the blob is deleted mid-read", async () => {
    const k = parseBlobKey("unlinked");
    await store.put(k, zeros(256 * KiB, 64 * KiB));
    const blob = await store.get(k);
    const reader = blob!.body.getReader();
    let total = (await reader.read()).value!.byteLength;
    await store.delete(k);
    for (let r = await reader.read(); !r.done; r = await reader.read()) total += r.value.byteLength;
    expect(total).toBe(256 * KiB);
    expect(await store.head(k)).toBeNull();
  });

  /** Directories under the root, relative (driver bookkeeping in `.tmp` excluded). */
  const dirsUnder = async () =>
    (await readdir(store.root, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => path.relative(store.root, path.join(e.parentPath, e.name)))
      .filter((d) => !d.startsWith(".tmp"))
      .sort();

  it("a delete removes the directories it empties, up to the root (tus parts leave no tus/<id>/)", async () => {
    const keys = ["tus/aa/0-x", "tus/aa/5-y", "tus/bb/0-z"].map(parseBlobKey);
    for (const k of keys) await store.put(k, streamOf(bytesOf("part")));
    expect(await dirsUnder()).toEqual(["tus", "tus/aa", "tus/bb"].map((d) => path.join(...d.split("/"))));
    await store.delete(keys[0]!);
    expect(await dirsUnder()).toEqual(["tus", "tus/aa", "tus/bb"].map((d) => path.join(...d.split("/"))));
    await store.delete(keys[1]!);
    expect(await dirsUnder()).toEqual(["tus", path.join("tus", "bb")]);
    await store.delete(keys[2]!);
    expect(await dirsUnder()).toEqual([]);
    // The root itself and the driver's own folder stay; the store works as before.
    expect((await stat(store.root)).isDirectory()).toBe(true);
    await store.put(keys[0]!, streamOf(bytesOf("again")));
    expect(await readText((await store.get(keys[0]!))!.body)).toBe("again");
    expect(await tmpEntries()).toEqual([]);
  });

  it("a put racing a delete that empties its directory still lands (the directory is made again)", async () => {
    // Each round a delete empties `race/<n>/` while a put into it is committing: whichever order the
    // rmdir and the put's mkdir/rename take, the put must resolve with its blob in place.
    const rounds = 150;
    for (let n = 0; n < rounds; n++) {
      const old = parseBlobKey(`race/${n % 4}/old`);
      const fresh = parseBlobKey(`race/${n % 4}/fresh-${n}`);
      await store.put(old, streamOf(bytesOf("old")));
      const deleting = sleep(n % 3).then(() => store.delete(old));
      await Promise.all([store.put(fresh, streamOf(bytesOf(`fresh ${n}`))), deleting]);
      expect(await readText((await store.get(fresh))!.body)).toBe(`fresh ${n}`);
      await store.delete(fresh);
    }
    expect(await dirsUnder()).toEqual([]);
    expect(await tmpEntries()).toEqual([]);
  }, 120_000); // each round fsyncs several times: seconds on a loaded 2-core machine, over the 30 s default

  it("fails to open a root that cannot be created, naming it", async () => {
    const file = path.join(root, "a-file");
    await writeFile(file, "");
    const target = path.join(file, "volume");
    const err = await rejection(createFsBlobStore({ root: target }));
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe("IO");
    expect((err as StorageError).message).toContain(target);
  });

  it("check() fails clearly once the root is unwritable", async () => {
    await chmod(store.root, 0o555);
    // As root (or with CAP_DAC_OVERRIDE) permissions do not block writes; make the failure real
    // by putting a regular file where the root directory was.
    const permissionsBite = await writeFile(path.join(store.root, "probe-test"), "").then(
      async () => {
        await rm(path.join(store.root, "probe-test"));
        return false;
      },
      () => true,
    );
    if (!permissionsBite) {
      await chmod(store.root, 0o755);
      await rm(store.root, { recursive: true });
      await writeFile(store.root, "now a file");
    }
    const err = await rejection(store.check());
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe("IO");
    expect((err as StorageError).message).toMatch(/not writable/);
    expect((err as StorageError).message).toContain(store.root);
    if (!permissionsBite) await rm(store.root);
  });

  it("probe() fails clearly once the root is gone, without recreating anything", async () => {
    await expect(store.probe()).resolves.toBeUndefined();
    await rm(store.root, { recursive: true });
    const err = await rejection(store.probe());
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe("IO");
    expect((err as StorageError).message).toContain(store.root);
    await expect(stat(store.root)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("applies backpressure: a paused consumer of a 64 MiB blob does not make memory grow", async () => {
    const size = 64 * MiB;
    const k = parseBlobKey("huge.bin");
    await store.put(k, zeros(size, MiB));
    expect((await stat(path.join(store.root, "huge.bin"))).size).toBeGreaterThan(size);
    await sleep(50);
    const before = process.memoryUsage();

    const blob = await store.get(k);
    const reader = blob!.body.getReader();
    let received = 0;
    for (let i = 0; i < 4; i++) received += (await reader.read()).value!.byteLength;
    await sleep(300); // an eager adapter would read the whole file during this pause
    const during = process.memoryUsage();
    expect(during.arrayBuffers - before.arrayBuffers).toBeLessThan(8 * MiB);
    expect(during.rss - before.rss).toBeLessThan(24 * MiB);

    for (let r = await reader.read(); !r.done; r = await reader.read()) received += r.value.byteLength;
    expect(received).toBe(size);
  });
});

describe("fs driver: write batching", () => {
  let root: string;
  beforeEach(async () => {
    root = await makeRoot();
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("stores exactly the bytes of a producer that reuses one buffer, whatever the chunk sizes", async () => {
    const store = await createFsBlobStore({ root });
    // Small chunks (batched), ones straddling the 256 KiB batch boundary, one bigger than a batch
    // (written as it is) and odd sizes; every chunk is the same buffer, overwritten for the next.
    const sizes = [1, 17 * KiB, 64 * KiB, 100 * KiB, 300 * KiB, 64 * KiB, 5, 256 * KiB, 3 * KiB, 200 * KiB, 90 * KiB];
    const shared = new Uint8Array(300 * KiB);
    const expected: Uint8Array[] = [];
    let i = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const size = sizes[i];
          if (size === undefined) return controller.close();
          for (let b = 0; b < size; b++) shared[b] = (i * 31 + b) & 0xff;
          expected.push(shared.slice(0, size));
          i += 1;
          controller.enqueue(shared.subarray(0, size));
        },
      },
      { highWaterMark: 0 },
    );
    const k = parseBlobKey("batched");
    const info = await store.put(k, body);
    const want = Buffer.concat(expected);
    expect(info.size).toBe(want.byteLength);
    const got = await store.get(k);
    expect(Buffer.from(await new Response(got?.body).arrayBuffer()).equals(want)).toBe(true);
    expect(got?.sha256).toBe(createHash("sha256").update(want).digest("hex"));
  });
});

describe.each([
  ["thread-pool reads", 0],
  ["synchronous reads (CMS_FS_SYNC_READ_BYTES)", 64 * KiB],
])("fs driver openFile (the Node fast path's positional reads), %s", (_mode, syncReadBytes) => {
  let root: string;
  let store: FsBlobStore;
  beforeEach(async () => {
    root = await makeRoot();
    store = await createFsBlobStore({ root, syncReadBytes });
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const readAt = (file: BlobFile, position: number, length: number) =>
    new Promise<string>((resolve, reject) => {
      const into = new Uint8Array(length);
      file.read(into, 0, length, position, (err, got) =>
        err ? reject(err) : resolve(new TextDecoder().decode(into.subarray(0, got))),
      );
    });

  it("reads content at any position, keeps one file open for many readers, and counts them", async () => {
    const k = parseBlobKey("video");
    const info = await store.put(k, streamOf(bytesOf("0123456789")));
    const first = await store.openFile(k);
    const second = await store.openFile(k);
    expect(first).toMatchObject(info);
    expect(await readAt(first!, 3, 4)).toBe("3456");
    expect(await readAt(second!, 8, 10)).toBe("89"); // short at the end
    expect(await readAt(second!, 10, 5)).toBe(""); // past the end
    expect(store.openFileStats()).toEqual({ pooled: 1, readers: 2 });
    first!.release();
    first!.release(); // idempotent
    second!.release();
    expect(store.openFileStats()).toEqual({ pooled: 1, readers: 0 });
  });

  it("is null for a missing key and rejects a file without a valid header as IO", async () => {
    expect(await store.openFile(parseBlobKey("missing"))).toBeNull();
    await writeFile(path.join(store.root, "foreign"), "not written by the driver");
    const err = await rejection(store.openFile(parseBlobKey("foreign")));
    expect((err as StorageError).code).toBe("IO");
  });

  it("never serves a replaced or deleted blob from a kept file; a reader keeps its own bytes", async () => {
    const k = parseBlobKey("changing");
    await store.put(k, streamOf(bytesOf("old content")));
    const reader = await store.openFile(k);
    reader!.release();
    const holding = await store.openFile(k);
    await store.put(k, streamOf(bytesOf("new content")));
    const after = await store.openFile(k);
    expect(await readAt(after!, 0, 11)).toBe("new content");
    expect(await readAt(holding!, 0, 11)).toBe("old content");
    holding!.release();
    after!.release();
    await store.delete(k);
    expect(await store.openFile(k)).toBeNull();
    expect(store.openFileStats()).toEqual({ pooled: 0, readers: 0 });
  });
});
