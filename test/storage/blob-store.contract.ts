/**
 * The conformance suite every BlobStore driver must pass (fs, memory, later S3 and R2 in workerd).
 * Web APIs only — nothing from `node:` — so it can run inside any runtime.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, type BlobKey, type BlobStore, type StorageErrorCode } from "../../src/storage/blob-store.js";
import { contentKeyUnder, parseBlobKey, tenantPrefix } from "../../src/storage/keys.js";
import { comparePattern, pattern, streamOf } from "../helpers/streams.js";

export interface BlobStoreFixture {
  store: BlobStore;
  /** Releases whatever `setup` created (temp dirs, buckets). */
  cleanup: () => Promise<void>;
}

const KiB = 1024;
const MiB = 1024 * KiB;

const key = (raw: string) => parseBlobKey(raw);
const bytesOf = (text: string) => new TextEncoder().encode(text);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

/** `total` bytes of `pattern`, generated chunk by chunk on demand (never held in memory at once). */
function generated(total: number, chunkSize: number, options: { delayMs?: number } = {}): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (options.delayMs) await sleep(options.delayMs);
        const length = Math.min(chunkSize, total - offset);
        if (length > 0) controller.enqueue(pattern(offset, length));
        offset += length;
        if (offset >= total) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Sends `chunks`, then errors with `error` on the next pull (an upload that dies midway). */
function failingAfter(error: Error, ...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.error(error);
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

async function collect(keys: AsyncIterable<BlobKey>): Promise<string[]> {
  const out: string[] = [];
  for await (const k of keys) out.push(k);
  return out.sort();
}

async function expectStorageError(promise: Promise<unknown>, code: StorageErrorCode): Promise<StorageError> {
  const err = await promise.then(
    () => {
      throw new Error(`expected StorageError ${code}, but it resolved`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageError);
  expect((err as StorageError).code).toBe(code);
  return err as StorageError;
}

/** Index of the first difference (or of the shorter end), -1 if equal; cheaper than toEqual on big arrays. */
function firstDifference(actual: Uint8Array, expected: Uint8Array): number {
  const n = Math.min(actual.byteLength, expected.byteLength);
  for (let i = 0; i < n; i++) if (actual[i] !== expected[i]) return i;
  return actual.byteLength === expected.byteLength ? -1 : n;
}

const allBytesEqual = (bytes: Uint8Array, value: number) => bytes.every((b) => b === value);

export function describeBlobStore(name: string, setup: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let store: BlobStore;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await setup());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe("round trip", () => {
      it("stores and returns zero bytes", async () => {
        const k = key("empty");
        const info = await store.put(k, streamOf());
        const empty = new Uint8Array(0);
        expect(info).toEqual({ size: 0, sha256: await sha256Hex(empty) });
        const blob = await store.get(k);
        expect(blob).not.toBeNull();
        expect(blob!.size).toBe(0);
        expect(await readAll(blob!.body)).toEqual(empty);
      });

      it("round-trips all 256 byte values exactly", async () => {
        const k = key("bin/all-bytes");
        const bytes = new Uint8Array(512).map((_, i) => (i * 255) % 256); // 0,255,254,... covers every value
        expect(new Set(bytes).size).toBe(256);
        await store.put(k, streamOf(bytes.subarray(0, 100), bytes.subarray(100)));
        const blob = await store.get(k);
        expect(await readAll(blob!.body)).toEqual(bytes);
      });

      it("streams a multi-chunk 8 MiB body and reports size and sha256", async () => {
        const total = 8 * MiB;
        const k = key("big/eight-mib.bin");
        const expectedSha = await sha256Hex(pattern(0, total));
        const info = await store.put(k, generated(total, 64 * KiB));
        expect(info).toEqual({ size: total, sha256: expectedSha });
        expect(await store.head(k)).toEqual({ size: total, sha256: expectedSha });

        const blob = await store.get(k);
        expect(blob!.size).toBe(total);
        expect(blob!.sha256).toBe(expectedSha);
        expect(await comparePattern(blob!.body, 0)).toEqual({ mismatch: -1, length: total });
      });

      it("reports size and sha256 on put, head and get", async () => {
        const k = key("info");
        const bytes = bytesOf("hello, blob");
        const expected = { size: bytes.byteLength, sha256: await sha256Hex(bytes) };
        expect(await store.put(k, streamOf(bytes))).toEqual(expected);
        expect(await store.head(k)).toEqual(expected);
        const blob = await store.get(k);
        expect({ size: blob!.size, sha256: blob!.sha256 }).toEqual(expected);
        await blob!.body.cancel();
      });
    });

    describe("missing keys", () => {
      it("get and head return null; delete is a no-op", async () => {
        const k = key("nope/never-written");
        expect(await store.get(k)).toBeNull();
        expect(await store.head(k)).toBeNull();
        await expect(store.delete(k)).resolves.toBeUndefined();
      });

      it("a key that is only a prefix of other keys is not a blob", async () => {
        await store.put(key("dir/child"), streamOf(bytesOf("x")));
        expect(await store.get(key("dir"))).toBeNull();
        expect(await store.head(key("dir"))).toBeNull();
        await store.delete(key("dir"));
        expect(await store.head(key("dir/child"))).not.toBeNull();
      });

      it("delete removes the blob", async () => {
        const k = key("to-delete");
        await store.put(k, streamOf(bytesOf("bye")));
        await store.delete(k);
        expect(await store.head(k)).toBeNull();
        expect(await collect(store.list(""))).toEqual([]);
      });
    });

    it("overwrites with put", async () => {
      const k = key("over/write");
      await store.put(k, streamOf(bytesOf("first version, longer")));
      const second = bytesOf("second");
      const info = await store.put(k, streamOf(second));
      expect(info).toEqual({ size: second.byteLength, sha256: await sha256Hex(second) });
      expect(await store.head(k)).toEqual(info);
      expect(await readAll((await store.get(k))!.body)).toEqual(second);
    });

    describe("ranges", () => {
      const size = 200 * KiB + 17; // several read chunks, odd tail
      const k = key("ranged");
      beforeEach(async () => {
        await store.put(k, generated(size, 50 * KiB));
      });

      it.each([
        ["first byte", 0, 0],
        ["last byte", size - 1, size - 1],
        ["middle across chunk boundaries", 60 * KiB + 3, 140 * KiB + 9],
        ["whole blob", 0, size - 1],
      ])("%s", async (_label, start, end) => {
        const blob = await store.get(k, { start, end });
        expect(blob!.size).toBe(size); // always the full blob's size, for Content-Range
        expect(firstDifference(await readAll(blob!.body), pattern(start, end - start + 1))).toBe(-1);
      });
    });

    describe("failed uploads leave nothing behind", () => {
      it("an upload whose stream errors midway rejects with that same error", async () => {
        const k = key("aborted");
        const boom = new Error("connection reset by origin");
        const err = await store
          .put(k, failingAfter(boom, pattern(0, 64 * KiB), pattern(64 * KiB, 64 * KiB)))
          .catch((e: unknown) => e);
        expect(err).toBe(boom);
        expect(await store.head(k)).toBeNull();
        expect(await collect(store.list(""))).toEqual([]);
      });

      it("an aborted overwrite keeps the previous content", async () => {
        const k = key("keep-old");
        const old = bytesOf("old content");
        await store.put(k, streamOf(old));
        const boom = new Error("aborted");
        await expect(store.put(k, failingAfter(boom, bytesOf("new content, partial")))).rejects.toBe(boom);
        expect(await readAll((await store.get(k))!.body)).toEqual(old);
      });

      it("an aborted content-addressed upload rejects with that error and stores nothing", async () => {
        const prefix = await tenantPrefix("tenant-abort");
        const boom = new Error("client went away");
        let keyForCalled = false;
        const upload = store.putContentAddressed(failingAfter(boom, bytesOf("partial")), ({ sha256 }) => {
          keyForCalled = true;
          return contentKeyUnder(prefix, sha256);
        });
        await expect(upload).rejects.toBe(boom);
        expect(keyForCalled).toBe(false);
        expect(await collect(store.list(""))).toEqual([]);
      });

      it("maxBytes exceeded: TOO_LARGE, the body is cancelled, nothing stored", async () => {
        const k = key("too/large");
        let cancelled = false;
        let sent = 0;
        const endless = new ReadableStream<Uint8Array>(
          {
            pull(controller) {
              sent += 64 * KiB;
              controller.enqueue(new Uint8Array(64 * KiB));
            },
            cancel() {
              cancelled = true;
            },
          },
          { highWaterMark: 0 },
        );
        await expectStorageError(store.put(k, endless, { maxBytes: MiB }), "TOO_LARGE");
        expect(cancelled).toBe(true);
        expect(sent).toBeLessThanOrEqual(MiB + 2 * 64 * KiB); // stopped at the limit, not the end
        expect(await store.head(k)).toBeNull();
        expect(await collect(store.list(""))).toEqual([]);
      });

      it("maxBytes is inclusive", async () => {
        const k = key("exactly-at-limit");
        const info = await store.put(k, generated(100 * KiB, 7 * KiB), { maxBytes: 100 * KiB });
        expect(info.size).toBe(100 * KiB);
      });

      it("maxBytes applies to content-addressed puts", async () => {
        const prefix = await tenantPrefix("tenant-big");
        const upload = store.putContentAddressed(
          generated(MiB, 64 * KiB),
          ({ sha256 }) => contentKeyUnder(prefix, sha256),
          {
            maxBytes: MiB - 1,
          },
        );
        await expectStorageError(upload, "TOO_LARGE");
        expect(await collect(store.list(""))).toEqual([]);
      });

      it("expectedSha256 mismatch: HASH_MISMATCH, nothing stored, old content kept", async () => {
        const k = key("hashed");
        const old = bytesOf("old");
        await store.put(k, streamOf(old));
        const wrong = await sha256Hex(bytesOf("something else"));
        await expectStorageError(store.put(k, streamOf(bytesOf("new")), { expectedSha256: wrong }), "HASH_MISMATCH");
        await expectStorageError(
          store.put(key("hashed-fresh"), streamOf(bytesOf("new")), { expectedSha256: wrong }),
          "HASH_MISMATCH",
        );
        expect(await readAll((await store.get(k))!.body)).toEqual(old);
        expect(await collect(store.list(""))).toEqual(["hashed"]);
      });

      it("a matching expectedSha256 is accepted", async () => {
        const bytes = bytesOf("verified");
        const sha256 = await sha256Hex(bytes);
        expect(await store.put(key("verified"), streamOf(bytes), { expectedSha256: sha256 })).toEqual({
          size: bytes.byteLength,
          sha256,
        });
      });
    });

    describe("content addressing", () => {
      it("stores identical content once", async () => {
        const prefix = await tenantPrefix("tenant-a");
        const bytes = bytesOf("same bytes twice");
        const sha256 = await sha256Hex(bytes);
        const seen: unknown[] = [];
        const keyFor = (info: { size: number; sha256: string }) => {
          seen.push(info);
          return contentKeyUnder(prefix, info.sha256);
        };
        const first = await store.putContentAddressed(streamOf(bytes), keyFor);
        const second = await store.putContentAddressed(streamOf(bytes), keyFor);
        const expectedKey = contentKeyUnder(prefix, sha256);
        expect(first).toEqual({ key: expectedKey, size: bytes.byteLength, sha256, created: true });
        expect(second).toEqual({ key: expectedKey, size: bytes.byteLength, sha256, created: false });
        expect(seen).toEqual([
          { size: bytes.byteLength, sha256 },
          { size: bytes.byteLength, sha256 },
        ]);
        expect(await collect(store.list(prefix))).toEqual([expectedKey]);
        expect(await readAll((await store.get(expectedKey))!.body)).toEqual(bytes);
      });

      it("isolates tenants: same content, different keys, separate listings", async () => {
        const [a, b] = await Promise.all([tenantPrefix("tenant-a"), tenantPrefix("tenant-b")]);
        const bytes = bytesOf("shared document");
        const inA = await store.putContentAddressed(streamOf(bytes), ({ sha256 }) => contentKeyUnder(a, sha256));
        const inB = await store.putContentAddressed(streamOf(bytes), ({ sha256 }) => contentKeyUnder(b, sha256));
        expect(inA.created && inB.created).toBe(true);
        expect(inA.key).not.toBe(inB.key);
        expect(await collect(store.list(a))).toEqual([inA.key]);
        expect(await collect(store.list(b))).toEqual([inB.key]);
        await store.delete(inA.key);
        expect(await collect(store.list(a))).toEqual([]);
        expect(await readAll((await store.get(inB.key))!.body)).toEqual(bytes);
      });
    });

    describe("list", () => {
      it("lists keys by prefix, including mid-segment prefixes", async () => {
        for (const k of ["a/b/c", "a/bb", "a/c", "x"]) await store.put(key(k), streamOf(bytesOf(k)));
        expect(await collect(store.list(""))).toEqual(["a/b/c", "a/bb", "a/c", "x"]);
        expect(await collect(store.list("a/b"))).toEqual(["a/b/c", "a/bb"]);
        expect(await collect(store.list("a/b/"))).toEqual(["a/b/c"]);
        expect(await collect(store.list("zzz/"))).toEqual([]);
      });
    });

    describe("key validation is enforced by the driver too", () => {
      it.each(["../escape", "/abs", "a/../../b", "a\\b", ".tmp/x"])("rejects %j", async (raw) => {
        const bad = raw as BlobKey; // bypassing parseBlobKey, as a buggy caller might
        await expectStorageError(store.get(bad), "INVALID_KEY");
        await expectStorageError(store.head(bad), "INVALID_KEY");
        await expectStorageError(store.delete(bad), "INVALID_KEY");
        await expectStorageError(store.put(bad, streamOf(bytesOf("x"))), "INVALID_KEY");
      });

      it("rejects invalid list prefixes and keyFor results", async () => {
        await expectStorageError(collect(store.list("../")), "INVALID_KEY");
        const upload = store.putContentAddressed(streamOf(bytesOf("x")), () => "../x" as BlobKey);
        await expectStorageError(upload, "INVALID_KEY");
        expect(await collect(store.list(""))).toEqual([]);
      });
    });

    describe("concurrent readers during an overwrite", () => {
      const size = 256 * KiB;
      const filled = (value: number) => new Uint8Array(size).fill(value);

      it("a read started before the overwrite finishes with the old bytes, never a mix", async () => {
        const k = key("concurrent/one");
        await store.put(k, streamOf(filled(0xaa)));
        const blob = await store.get(k);
        const reader = blob!.body.getReader();
        const first = await reader.read(); // partly consumed when the overwrite lands
        await store.put(k, streamOf(filled(0xbb)));
        const rest: Uint8Array[] = [first.value!];
        for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(r.value);
        const seen = await readAll(streamOf(...rest));
        expect(seen.byteLength).toBe(size);
        expect(allBytesEqual(seen, 0xaa) || allBytesEqual(seen, 0xbb)).toBe(true);
        expect(allBytesEqual(await readAll((await store.get(k))!.body), 0xbb)).toBe(true);
      });

      it("reads racing a slow overwrite each see one complete version", async () => {
        const k = key("concurrent/many");
        await store.put(k, streamOf(filled(0xaa)));
        let done = false;
        const chunks = Array.from({ length: 16 }, () => new Uint8Array(size / 16).fill(0xbb));
        let i = 0;
        const slow = new ReadableStream<Uint8Array>({
          async pull(controller) {
            await sleep(2);
            const chunk = chunks[i++];
            if (chunk) controller.enqueue(chunk);
            else controller.close();
          },
        });
        const overwrite = store.put(k, slow).finally(() => {
          done = true;
        });
        const versions = new Set<number>();
        do {
          const blob = await store.get(k);
          const bytes = await readAll(blob!.body);
          expect(bytes.byteLength).toBe(size);
          const v = bytes[0]!;
          expect(allBytesEqual(bytes, v)).toBe(true);
          versions.add(v);
          await sleep(1);
        } while (!done);
        await overwrite;
        expect([...versions].every((v) => v === 0xaa || v === 0xbb)).toBe(true);
      });
    });

    it("check() passes on a healthy store", async () => {
      await expect(store.check()).resolves.toBeUndefined();
    });

    it("probe() passes on a healthy store, empty or not, and stores nothing", async () => {
      await expect(store.probe()).resolves.toBeUndefined();
      await store.put(key("probe/a"), streamOf(bytesOf("a")));
      await expect(store.probe()).resolves.toBeUndefined();
      expect(await collect(store.list(""))).toEqual(["probe/a"]);
    });

    // The owner marker: a store belongs to the one deployment (metadata database) that claimed it first.
    describe("owner", () => {
      it("has none until claimed; the first claim is kept, later ones answer it", async () => {
        expect(await store.owner()).toBeNull();
        expect(await store.claimOwner("deployment-a")).toBe("deployment-a");
        expect(await store.claimOwner("deployment-b")).toBe("deployment-a");
        expect(await store.claimOwner("deployment-a")).toBe("deployment-a");
        expect(await store.owner()).toBe("deployment-a");
      });

      it("claims racing each other: exactly one deployment wins and every caller learns which", async () => {
        const ids = Array.from({ length: 6 }, (_, i) => `deployment-${i}`);
        const answers = await Promise.all([...ids, ...ids].map((id) => store.claimOwner(id)));
        expect(new Set(answers).size).toBe(1);
        expect(ids).toContain(answers[0]);
        expect(await store.owner()).toBe(answers[0]);
      });

      it("is no blob: never listed, and refuses an id that is not a plain token", async () => {
        await store.put(key("a"), streamOf(bytesOf("x")));
        await store.claimOwner("deployment-a");
        expect(await collect(store.list(""))).toEqual(["a"]);
        await expect(store.claimOwner("")).rejects.toThrow(RangeError);
        await expect(store.claimOwner("two\nlines")).rejects.toThrow(RangeError);
        expect(await store.owner()).toBe("deployment-a");
      });
    });
  });
}
