// Runs the blob-store conformance suite over the small-blob cache (in front of fs and memory, with
// small entries only and with every blob cached), plus cache-only guarantees: hits skip the inner
// store, writes invalidate, racing fills are dropped, LRU eviction, and no aliasing of cached bytes.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { BlobKey, BlobStore, ByteRange } from "../../../src/storage/blob-store.js";
import { createCachedBlobStore } from "../../../src/storage/drivers/cached.js";
import { createFsBlobStore } from "../../../src/storage/drivers/fs.js";
import { createMemoryBlobStore } from "../../../src/storage/drivers/memory.js";
import { contentKeyUnder, parseBlobKey, tenantPrefix } from "../../../src/storage/keys.js";
import { describeBlobStore } from "../blob-store.contract.js";

const KiB = 1024;
const MiB = 1024 * KiB;

describeBlobStore("cached(fs), 64 KiB entries", async () => {
  const root = await mkdtemp(path.join(tmpdir(), "cached-blobs-"));
  const inner = await createFsBlobStore({ root });
  return {
    store: createCachedBlobStore(inner, { maxBytes: 4 * MiB, maxEntryBytes: 64 * KiB }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

// Every blob the suite writes (up to 8 MiB) is cached, so each contract test runs against the cache path.
describeBlobStore("cached(fs), every blob cached", async () => {
  const root = await mkdtemp(path.join(tmpdir(), "cached-blobs-"));
  const inner = await createFsBlobStore({ root });
  return {
    store: createCachedBlobStore(inner, { maxBytes: 64 * MiB, maxEntryBytes: 16 * MiB }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

describeBlobStore("cached(memory), every blob cached", async () => ({
  store: createCachedBlobStore(createMemoryBlobStore(), { maxBytes: 64 * MiB, maxEntryBytes: 16 * MiB }),
  cleanup: async () => {},
}));

const key = (raw: string) => parseBlobKey(raw);
const bytesOf = (text: string) => new TextEncoder().encode(text);
const filled = (length: number, value: number) => new Uint8Array(length).fill(value);

function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[i++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const text = async (store: BlobStore, k: BlobKey, range?: ByteRange) => {
  const blob = await store.get(k, range);
  return blob ? new TextDecoder().decode(await readAll(blob.body)) : null;
};

/** A memory store that counts inner reads and can hold reads (those `hold` selects) until released. */
function instrumented() {
  const inner = createMemoryBlobStore();
  const calls = { get: 0, head: 0 };
  let gate: { wait: Promise<void>; applies: (range?: ByteRange) => boolean } | null = null;
  let release = () => {};
  const store: BlobStore = {
    driver: inner.driver,
    put: (k, body, options) => inner.put(k, body, options),
    putContentAddressed: (body, keyFor, options) => inner.putContentAddressed(body, keyFor, options),
    async get(k, range) {
      calls.get += 1;
      const held = gate?.applies(range) ? gate.wait : null; // decided when the read starts
      const result = await inner.get(k, range);
      if (held) await held; // resolved with the content as it was, delivered later
      return result;
    },
    head: (k) => {
      calls.head += 1;
      return inner.head(k);
    },
    delete: (k) => inner.delete(k),
    list: (prefix) => inner.list(prefix),
    check: () => inner.check(),
    probe: () => inner.probe(),
    owner: () => inner.owner(),
    claimOwner: (id) => inner.claimOwner(id),
  };
  return {
    store,
    calls,
    hold(applies: (range?: ByteRange) => boolean = () => true) {
      let resolve = () => {};
      const wait = new Promise<void>((r) => (resolve = r));
      gate = { wait, applies };
      release = () => {
        gate = null;
        resolve();
      };
    },
    release: () => release(),
  };
}

describe("cached blob store", () => {
  it("serves repeated reads of a small blob from memory", async () => {
    const { store: inner, calls } = instrumented();
    const store = createCachedBlobStore(inner, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("hot");
    await store.put(k, streamOf(bytesOf("hello, cache")));
    expect(await text(store, k)).toBe("hello, cache");
    expect(calls.get).toBe(1);
    for (let i = 0; i < 5; i++) expect(await text(store, k)).toBe("hello, cache");
    expect(await text(store, k, { start: 7, end: 11 })).toBe("cache");
    expect(calls.get).toBe(1);
    expect(await store.head(k)).toEqual({ size: 12, sha256: expect.any(String) });
    expect(calls.head).toBe(0);
    expect(store.stats()).toMatchObject({ hits: 6, misses: 1, entries: 1, bytes: 12 });
  });

  it("reports the whole blob's size and sha256 for ranges served from memory", async () => {
    const inner = createMemoryBlobStore();
    const store = createCachedBlobStore(inner, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("sized");
    const info = await store.put(k, streamOf(bytesOf("0123456789")));
    await text(store, k); // fill
    const blob = await store.get(k, { start: 2, end: 4 });
    expect({ size: blob!.size, sha256: blob!.sha256 }).toEqual(info);
    expect(new TextDecoder().decode(await readAll(blob!.body))).toBe("234");
    // A hit also hands out the bytes themselves, so a response can skip the stream.
    expect(new TextDecoder().decode(blob!.bytes)).toBe("234");
  });

  it("hands out the cached bytes beside the stream, for the whole blob and for ranges", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("bytes");
    await store.put(k, streamOf(bytesOf("0123456789")));
    const first = await store.get(k); // the miss that fills the cache
    expect(new TextDecoder().decode(first!.bytes)).toBe("0123456789");
    expect(new TextDecoder().decode(await readAll(first!.body))).toBe("0123456789");
    const whole = await store.get(k);
    expect(new TextDecoder().decode(whole!.bytes)).toBe("0123456789");
    await whole!.body.cancel();
    const part = await store.get(k, { start: 3, end: 5 });
    expect(new TextDecoder().decode(part!.bytes)).toBe("345");
    expect(new TextDecoder().decode(await readAll(part!.body))).toBe("345");
  });

  it("has no bytes for blobs it passes through", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 4 });
    const k = key("bytes/large");
    await store.put(k, streamOf(bytesOf("too large to cache")));
    const blob = await store.get(k);
    expect(blob!.bytes).toBeUndefined();
    expect(new TextDecoder().decode(await readAll(blob!.body))).toBe("too large to cache");
  });

  it("rejects ranges outside a cached blob like the drivers do", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("short");
    await store.put(k, streamOf(bytesOf("abc")));
    await text(store, k);
    await expect(store.get(k, { start: 1, end: 3 })).rejects.toBeInstanceOf(RangeError);
    await expect(store.get(k, { start: 2, end: 1 })).rejects.toBeInstanceOf(RangeError);
  });

  it("a ranged miss answers the range and caches the whole blob in the background", async () => {
    const { store: inner, calls } = instrumented();
    const store = createCachedBlobStore(inner, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("ranged/first");
    await store.put(k, streamOf(bytesOf("abcdefghij")));
    expect(await text(store, k, { start: 3, end: 5 })).toBe("def");
    await store.idle(); // the background fill is done
    const before = calls.get;
    expect(await text(store, k)).toBe("abcdefghij");
    expect(await text(store, k, { start: 9, end: 9 })).toBe("j");
    expect(calls.get).toBe(before);
  });

  it("idle() resolves once the background fills have settled, those a write orphaned too", async () => {
    const harness = instrumented();
    const store = createCachedBlobStore(harness.store, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const [kept, orphaned] = [key("idle/kept"), key("idle/orphaned")];
    await store.put(kept, streamOf(bytesOf("kept")));
    await store.put(orphaned, streamOf(bytesOf("orphaned")));
    harness.hold((range) => range === undefined); // the background fills' whole-blob reads
    await text(store, orphaned, { start: 0, end: 1 });
    await store.delete(orphaned); // its fill reads on, its result to be dropped
    let idle = false;
    const waiting = store.idle().then(() => (idle = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(idle).toBe(false); // the orphaned fill is still reading
    await text(store, kept, { start: 0, end: 1 }); // a fill that starts while idle() waits
    harness.release();
    await waiting;
    expect(store.stats()).toMatchObject({ entries: 1, bytes: 4 });
    expect(store.peek?.(kept)).toBeDefined();
    await store.idle(); // nothing in flight: at once
  });

  it("concurrent misses on a cold key read it once, even under continuous load", async () => {
    const harness = instrumented();
    const store = createCachedBlobStore(harness.store, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("cold/hot");
    await store.put(k, streamOf(bytesOf("popular")));
    harness.hold();
    const first = Array.from({ length: 20 }, () => store.get(k).then((b) => readAll(b!.body)));
    const ranged = store.get(k, { start: 0, end: 2 }).then((b) => readAll(b!.body));
    harness.release();
    // More readers arrive while the first fill completes: none may start another read.
    const more = Array.from({ length: 20 }, () => store.get(k).then((b) => readAll(b!.body)));
    for (const bytes of await Promise.all([...first, ...more])) expect(new TextDecoder().decode(bytes)).toBe("popular");
    expect(new TextDecoder().decode(await ranged)).toBe("pop");
    expect(harness.calls.get).toBe(1);
    expect(store.stats()).toMatchObject({ entries: 1, bytes: 7 });
  });

  it("passes blobs larger than maxEntryBytes straight through", async () => {
    const { store: inner, calls } = instrumented();
    const store = createCachedBlobStore(inner, { maxBytes: MiB, maxEntryBytes: 4 * KiB });
    const k = key("big");
    await store.put(k, streamOf(filled(4 * KiB + 1, 7)));
    for (let i = 0; i < 3; i++) expect((await readAll((await store.get(k))!.body)).byteLength).toBe(4 * KiB + 1);
    await store.get(k, { start: 0, end: 9 }).then((b) => b!.body.cancel());
    await store.idle(); // the background fill is done
    expect(calls.get).toBe(4);
    expect(store.stats().entries).toBe(0);
  });

  it("put, putContentAddressed and delete invalidate the key", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("changing");
    await store.put(k, streamOf(bytesOf("one")));
    expect(await text(store, k)).toBe("one");
    await store.put(k, streamOf(bytesOf("two")));
    expect(await text(store, k)).toBe("two");
    expect(await store.head(k)).toMatchObject({ size: 3 });
    await store.delete(k);
    expect(await store.get(k)).toBeNull();
    expect(await store.head(k)).toBeNull();

    // A content-addressed key is only ever re-created with the same bytes, but a delete + re-put
    // through this store must still be seen.
    const prefix = await tenantPrefix("tenant-cache");
    const keyFor = ({ sha256 }: { sha256: string }) => contentKeyUnder(prefix, sha256);
    const put = await store.putContentAddressed(streamOf(bytesOf("content")), keyFor);
    expect(await text(store, put.key)).toBe("content");
    await store.delete(put.key);
    expect(await store.get(put.key)).toBeNull();
    await store.putContentAddressed(streamOf(bytesOf("content")), keyFor);
    expect(await text(store, put.key)).toBe("content");
  });

  it("a failed put still invalidates, and the previous content stays readable", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("failing");
    await store.put(k, streamOf(bytesOf("kept")));
    await text(store, k);
    const failing = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("upload died"));
      },
    });
    await expect(store.put(k, failing)).rejects.toThrow("upload died");
    expect(await text(store, k)).toBe("kept");
  });

  it("does not cache a read that raced an overwrite", async () => {
    const harness = instrumented();
    const store = createCachedBlobStore(harness.store, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("race");
    await store.put(k, streamOf(bytesOf("old")));
    harness.hold();
    const slowRead = store.get(k); // inner.get resolves with "old", delivered after the overwrite
    await store.put(k, streamOf(bytesOf("new")));
    harness.release();
    expect(new TextDecoder().decode(await readAll((await slowRead)!.body))).toBe("old");
    expect(await text(store, k)).toBe("new");
    expect(await text(store, k)).toBe("new");
  });

  it("does not cache a background fill that raced a delete", async () => {
    const harness = instrumented();
    const store = createCachedBlobStore(harness.store, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("race/delete");
    await store.put(k, streamOf(bytesOf("doomed")));
    harness.hold((range) => range === undefined); // only the whole-blob read of the background fill
    const ranged = await store.get(k, { start: 0, end: 1 });
    expect(new TextDecoder().decode(await readAll(ranged!.body))).toBe("do");
    await store.delete(k);
    harness.release();
    await store.idle(); // the background fill is done
    expect(await store.get(k)).toBeNull();
    expect(store.stats().entries).toBe(0);
  });

  it("evicts least recently used entries to stay within maxBytes", async () => {
    const { store: inner, calls } = instrumented();
    const store = createCachedBlobStore(inner, { maxBytes: 10 * KiB, maxEntryBytes: 8 * KiB });
    const [a, b, c] = [key("lru/a"), key("lru/b"), key("lru/c")];
    await store.put(a, streamOf(filled(4 * KiB, 1)));
    await store.put(b, streamOf(filled(4 * KiB, 2)));
    await store.put(c, streamOf(filled(4 * KiB, 3)));
    await store.get(a).then((x) => readAll(x!.body));
    await store.get(b).then((x) => readAll(x!.body));
    await store.get(a).then((x) => readAll(x!.body)); // a is now more recent than b
    await store.get(c).then((x) => readAll(x!.body)); // 12 KiB > 10 KiB: evicts b
    expect(store.stats()).toMatchObject({ entries: 2, bytes: 8 * KiB });
    const before = calls.get;
    await store.get(a).then((x) => readAll(x!.body));
    await store.get(c).then((x) => readAll(x!.body));
    expect(calls.get).toBe(before);
    expect((await readAll((await store.get(b))!.body))[0]).toBe(2);
    expect(calls.get).toBe(before + 1);
  });

  it("never holds more than maxBytes, even for one entry", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: 2 * KiB, maxEntryBytes: 64 * KiB });
    const k = key("too-big-for-cache");
    await store.put(k, streamOf(filled(3 * KiB, 5)));
    expect((await readAll((await store.get(k))!.body)).byteLength).toBe(3 * KiB);
    expect(store.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it("consumers cannot change cached bytes", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("alias");
    await store.put(k, streamOf(new Uint8Array([1, 2, 3])));
    for (let i = 0; i < 2; i++) {
      const reader = (await store.get(k))!.body.getReader();
      const { value } = await reader.read();
      value!.fill(9);
      await reader.cancel();
    }
    expect([...(await readAll((await store.get(k))!.body))]).toEqual([1, 2, 3]);
  });

  it("serves an empty blob", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("empty");
    await store.put(k, streamOf());
    for (let i = 0; i < 2; i++) expect((await readAll((await store.get(k))!.body)).byteLength).toBe(0);
    expect(store.stats()).toMatchObject({ hits: 1, entries: 1, bytes: 0 });
  });

  it("clear() drops everything", async () => {
    const store = createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    const k = key("cleared");
    await store.put(k, streamOf(bytesOf("x")));
    await text(store, k);
    store.clear();
    expect(store.stats()).toMatchObject({ entries: 0, bytes: 0 });
    expect(await text(store, k)).toBe("x");
  });

  it("keeps the inner driver's name and validates keys through it", async () => {
    const inner = createMemoryBlobStore();
    const store = createCachedBlobStore(inner, { maxBytes: MiB, maxEntryBytes: 64 * KiB });
    expect(store.driver).toBe(inner.driver);
    expect(store.inner).toBe(inner);
    await expect(store.get("../x" as BlobKey)).rejects.toMatchObject({ code: "INVALID_KEY" });
  });
});

describe("cached blob store over files (openFile)", () => {
  it("passes openFile through, caching a small blob in the background and never a large one", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "cached-blobs-"));
    try {
      const cache = createCachedBlobStore(await createFsBlobStore({ root }), {
        maxBytes: MiB,
        maxEntryBytes: 64 * KiB,
      });
      const small = parseBlobKey("small");
      const large = parseBlobKey("large");
      await cache.put(small, new Response("tiny").body!);
      await cache.put(large, new Response(new Uint8Array(128 * KiB)).body!);
      const file = await cache.openFile!(small);
      const into = new Uint8Array(4);
      expect(await new Promise((resolve) => file!.read(into, 0, 4, 0, (_err, got) => resolve(got)))).toBe(4);
      expect(new TextDecoder().decode(into)).toBe("tiny");
      file!.release();
      await cache.idle();
      expect(new TextDecoder().decode(cache.peek!(small))).toBe("tiny");
      (await cache.openFile!(large))!.release();
      await cache.idle();
      expect(cache.peek!(large)).toBeUndefined();
      expect(cache.stats().entries).toBe(1);
      expect(await cache.openFile!(parseBlobKey("missing"))).toBeNull();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("has no openFile over a store without files", () => {
    expect(
      createCachedBlobStore(createMemoryBlobStore(), { maxBytes: MiB, maxEntryBytes: KiB }).openFile,
    ).toBeUndefined();
  });
});
