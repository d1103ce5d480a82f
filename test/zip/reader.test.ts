import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/zip/crc32.js";
import {
  openZip,
  ZIP_ERROR_CODES,
  ZipError,
  type ZipArchive,
  type ZipErrorReason,
  type ZipLimits,
} from "../../src/zip/reader.js";
import { domainProblem } from "../../src/http/domain-problems.js";
import type { ByteRange } from "../../src/storage/blob-store.js";
import {
  buildZip,
  crc32Update,
  drain,
  memorySource,
  type WriterEntry,
  type WriterOptions,
} from "../helpers/zip-writer.js";

const MiB = 1024 * 1024;
const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Deterministic, incompressible bytes. */
function noise(length: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

async function zipOf(entries: WriterEntry[], options?: WriterOptions, limits?: Partial<ZipLimits>) {
  const bytes = await buildZip(entries, options);
  const source = memorySource(bytes);
  return { zip: await openZip(source, limits), source, bytes };
}

function entry(zip: ZipArchive, path: string) {
  const found = zip.entries.find((e) => e.path === path);
  if (!found) throw new Error(`no entry ${path}`);
  return found;
}

async function read(zip: ZipArchive, path: string): Promise<Uint8Array> {
  const { bytes, error } = await drain(zip.open(entry(zip, path)));
  if (error) throw error;
  return bytes;
}

async function expectZipError(promise: Promise<unknown>, reason: ZipErrorReason, message?: RegExp): Promise<ZipError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ZipError);
  const zipError = err as ZipError;
  expect(zipError.reason).toBe(reason);
  expect(zipError.code).toBe(ZIP_ERROR_CODES[reason]);
  // What a client is answered (the HTTP edge's table): a 400 naming the field the zip came from.
  const problem = domainProblem(zipError.from("/body/resourceExternalURI"));
  expect(problem?.status).toBe(400);
  expect(problem?.code).toBe("VALIDATION_FAILED");
  expect(problem?.errors).toEqual([{ pointer: "/body/resourceExternalURI", detail: zipError.message }]);
  if (message) expect(zipError.message).toMatch(message);
  return zipError;
}

const rejectsOpen = (
  entries: WriterEntry[],
  reason: ZipErrorReason,
  message?: RegExp,
  limits?: Partial<ZipLimits>,
  options?: WriterOptions,
) =>
  expectZipError(
    buildZip(entries, options).then((bytes) => openZip(memorySource(bytes), limits)),
    reason,
    message,
  );

/** Drains the entry and expects the stream (not openZip) to fail. */
async function rejectsRead(zip: ZipArchive, path: string, reason: ZipErrorReason, message?: RegExp) {
  const { bytes, error } = await drain(zip.open(entry(zip, path)));
  await expectZipError(Promise.reject(error ?? new Error("stream ended without error")), reason, message);
  return bytes;
}

describe("crc32", () => {
  it("matches the standard check value and the test writer's implementation", () => {
    expect(crc32(utf8("123456789"))).toBe(0xcbf43926);
    const data = noise(10_000);
    expect(crc32(data)).toBe(crc32Update(0, data));
  });
});

describe("openZip: reading", () => {
  it("round-trips many files: nested directories, unicode names, empty files, stored and deflate", async () => {
    const files = new Map<string, Uint8Array<ArrayBuffer>>();
    for (let i = 0; i < 60; i++) files.set(`dir${i % 4}/sub${i % 3}/file-${i}.txt`, utf8(`file ${i} `.repeat(i * 10)));
    files.set("日本語/ファイル.html", utf8("<p>こんにちは</p>"));
    files.set("café/naïve 📄.txt", utf8("unicode"));
    files.set("empty-stored.txt", new Uint8Array(0));
    files.set("empty-deflated.txt", new Uint8Array(0));
    files.set("binary.bin", noise(300_000));
    const entries: WriterEntry[] = [
      { name: "dir0/", method: 0 },
      { name: "dir0/sub0/", method: 0 },
    ];
    let i = 0;
    for (const [name, data] of files) entries.push({ name, data, method: name.includes("stored") || i++ % 2 ? 0 : 8 });
    const { zip } = await zipOf(entries);

    expect(zip.entries.map((e) => e.path)).toEqual(["dir0", "dir0/sub0", ...files.keys()]);
    expect(zip.entries.filter((e) => e.isDirectory).map((e) => e.path)).toEqual(["dir0", "dir0/sub0"]);
    expect(new Set(zip.entries.map((e) => e.method))).toEqual(new Set([0, 8]));
    for (const [name, data] of files) {
      const e = entry(zip, name);
      expect(e.uncompressedSize).toBe(data.length);
      expect(e.crc32).toBe(crc32(data));
      expect(await read(zip, name)).toEqual(data);
    }
    expect(await read(zip, "dir0")).toEqual(new Uint8Array(0));
  });

  it("can open the same entry twice, and entries in any order", async () => {
    const { zip } = await zipOf([
      { name: "a.txt", data: "alpha" },
      { name: "b.txt", data: "beta" },
    ]);
    expect(text(await read(zip, "b.txt"))).toBe("beta");
    expect(text(await read(zip, "a.txt"))).toBe("alpha");
    expect(text(await read(zip, "b.txt"))).toBe("beta");
  });

  it("reads entries written with data descriptors (bit 3)", async () => {
    const { zip } = await zipOf([
      { name: "streamed.txt", data: "x".repeat(5000), dataDescriptor: true },
      { name: "stored.txt", data: "stored", method: 0, dataDescriptor: true },
    ]);
    expect(text(await read(zip, "streamed.txt"))).toBe("x".repeat(5000));
    expect(text(await read(zip, "stored.txt"))).toBe("stored");
  });

  it("reads ZIP64 extra fields and ZIP64 end records", async () => {
    const { zip } = await zipOf(
      [
        { name: "a.txt", data: "hello zip64", zip64: true },
        { name: "b.bin", data: noise(1000), method: 0, zip64: true },
      ],
      { zip64: true },
    );
    expect(zip.entries.map((e) => [e.path, e.uncompressedSize])).toEqual([
      ["a.txt", 11],
      ["b.bin", 1000],
    ]);
    expect(text(await read(zip, "a.txt"))).toBe("hello zip64");
    expect(await read(zip, "b.bin")).toEqual(noise(1000));
  });

  it("opens an empty archive and one with a comment that contains an end-record signature", async () => {
    expect((await zipOf([])).zip.entries).toEqual([]);
    const comment = `fake PK\x05\x06 record ${"c".repeat(2000)}`;
    const { zip } = await zipOf([{ name: "a.txt", data: "a" }], { comment });
    expect(text(await read(zip, "a.txt"))).toBe("a");
  });

  it("decodes names: UTF-8 with bit 11, UTF-8 without it, else CP437", async () => {
    const { zip } = await zipOf([
      { name: "flagged-é.txt", utf8: true },
      { name: "unflagged-é.txt", utf8: false },
      { name: new Uint8Array([0x63, 0x61, 0x66, 0x82, 0x2e, 0x74, 0x78, 0x74]), utf8: false }, // "caf" CP437 é ".txt"
    ]);
    expect(zip.entries.map((e) => e.path)).toEqual(["flagged-é.txt", "unflagged-é.txt", "café.txt"]);
    await rejectsOpen([{ name: new Uint8Array([0x61, 0xff, 0x62]), utf8: true }], "corrupt", /flagged UTF-8/);
  });

  it("refuses open() with an entry from another archive", async () => {
    const a = (await zipOf([{ name: "a.txt", data: "a" }])).zip;
    const b = (await zipOf([{ name: "a.txt", data: "a" }])).zip;
    expect(() => b.open(a.entries[0]!)).toThrow(TypeError);
  });
});

describe("openZip: damaged and unsupported archives", () => {
  it("refuses things that are not zips", async () => {
    for (const bytes of [new Uint8Array(0), utf8("hello"), noise(100_000), utf8("PK\x03\x04 not really")]) {
      await expectZipError(openZip(memorySource(bytes)), "corrupt", /not a valid zip/);
    }
  });

  it("refuses a truncated archive wherever it is cut", async () => {
    const bytes = await buildZip([
      { name: "a.txt", data: noise(5000) },
      { name: "b.txt", data: "bee" },
    ]);
    for (const cut of [1, 10, 21, 22, 60, 200, bytes.length - 100, 5000]) {
      await expectZipError(openZip(memorySource(bytes.slice(0, bytes.length - cut))), "corrupt");
    }
  });

  it("refuses trailing garbage after the end record", async () => {
    await rejectsOpen([{ name: "a.txt", data: "a" }], "corrupt", /end of central directory/, undefined, {
      trailing: utf8("garbage"),
    });
  });

  it("refuses data before the archive (self-extractors) and split archives", async () => {
    const bytes = await buildZip([{ name: "a.txt", data: "a" }]);
    const prefixed = new Uint8Array([...utf8("MZ stub"), ...bytes]);
    await expectZipError(
      openZip(memorySource(prefixed)),
      "corrupt",
      /central directory is not where the end record says/,
    );
    const split = bytes.slice();
    new DataView(split.buffer).setUint16(split.length - 22 + 4, 1, true); // "number of this disk"
    await expectZipError(openZip(memorySource(split)), "unsupported", /split/);
  });

  it("detects a CRC mismatch when the entry is read", async () => {
    const { zip } = await zipOf([{ name: "a.txt", data: "some content", lie: { crc32: 0x12345678 } }]);
    await rejectsRead(zip, "a.txt", "corrupt", /CRC-32 mismatch/);
  });

  it("detects entry data cut short by the source", async () => {
    const bytes = await buildZip([{ name: "a.bin", data: noise(50_000), method: 0 }]);
    const honest = memorySource(bytes);
    // A store that returns fewer bytes than asked for entry data (the archive's tail reads fine).
    const short = {
      size: bytes.length,
      read: async (range: ByteRange) => honest.read(range.start === 0 ? { start: 0, end: 20_000 } : range),
    };
    const zip = await openZip(short);
    await rejectsRead(zip, "a.bin", "corrupt", /truncated/);
  });

  it("reports invalid deflate data as corrupt", async () => {
    const { zip } = await zipOf([
      { name: "bad.txt", method: 8, rawData: noise(100), lie: { uncompressedSize: 1000, crc32: 0 } },
    ]);
    await rejectsRead(zip, "bad.txt", "corrupt", /compressed data is invalid/);
  });

  it("passes source I/O errors through unchanged (they are not the client's fault)", async () => {
    const ioError = new Error("disk on fire");
    for (const method of [0, 8]) {
      const bytes = await buildZip([{ name: "a.bin", data: noise(100_000), method }]);
      const honest = memorySource(bytes, 1024);
      const failingStream = {
        size: bytes.length,
        read: async (range: ByteRange) => {
          if (range.start !== 0) return honest.read(range);
          const inner = (await honest.read(range)).getReader();
          let chunks = 0;
          return new ReadableStream<Uint8Array>({
            async pull(controller) {
              if (++chunks > 3) return controller.error(ioError);
              const { done, value } = await inner.read();
              if (done) controller.close();
              else controller.enqueue(value);
            },
          });
        },
      };
      const zip = await openZip(failingStream);
      expect((await drain(zip.open(zip.entries[0]!))).error).toBe(ioError);
      const failingRead = {
        size: bytes.length,
        read: async (range: ByteRange) => (range.start === 0 ? Promise.reject(ioError) : honest.read(range)),
      };
      const zip2 = await openZip(failingRead);
      expect((await drain(zip2.open(zip2.entries[0]!))).error).toBe(ioError);
    }
  });

  it("refuses encryption and compression methods other than stored and deflate", async () => {
    await rejectsOpen([{ name: "secret.txt", data: "x", flags: 1 }], "unsupported", /encrypted/);
    await rejectsOpen([{ name: "b.txt", data: "x", method: 12 }], "unsupported", /compression method 12/);
    await rejectsOpen([{ name: "a.txt", data: "x", method: 99 }], "unsupported", /method 99/);
  });

  it("refuses local headers that disagree with the central directory", async () => {
    for (const local of [{ name: "other.txt" }, { method: 0 }, { crc32: 1 }]) {
      const { zip } = await zipOf([{ name: "a.txt", data: "hello hello hello", local }]);
      await rejectsRead(zip, "a.txt", "corrupt", /local header/);
    }
  });

  it("refuses overlapping entries (the 'better zip bomb' construction)", async () => {
    await rejectsOpen(
      [
        { name: "kernel.txt", data: "x".repeat(1000) },
        { name: "alias.txt", shareLocalWith: 0 },
      ],
      "corrupt",
      /overlaps/,
    );
  });

  it("refuses a stored entry whose sizes differ and a directory with content", async () => {
    await rejectsOpen(
      [{ name: "a.txt", data: "abc", method: 0, lie: { uncompressedSize: 4 } }],
      "corrupt",
      /stored with differing sizes/,
    );
    await rejectsOpen([{ name: "d/", data: "abc" }], "corrupt", /directory with content/);
  });
});

describe("openZip: path safety", () => {
  const slips: [string | Uint8Array<ArrayBuffer>, RegExp][] = [
    ["../evil.txt", /'\.\.' path segment/],
    ["a/../../evil.txt", /'\.\.' path segment/],
    ["a/..", /'\.\.' path segment/],
    ["..", /'\.\.' path segment/],
    ["/abs.txt", /absolute/],
    ["//server/share/x", /absolute/],
    ["C:/windows/x", /absolute/],
    ["c:x", /absolute/],
    ["C:\\windows\\x", /backslash/],
    ["\\\\server\\share\\x", /backslash/],
    ["a\\..\\..\\x", /backslash/],
    ["./a.txt", /'\.' path segment/],
    ["a/./b.txt", /'\.' path segment/],
    ["a//b.txt", /empty path segment/],
    ["a/b//", /empty path segment/],
    ["/", /absolute/],
    ["", /empty name/],
    [new Uint8Array([0x61, 0x00, 0x62]), /control or bidirectional/],
    ["a\nb.txt", /control or bidirectional/],
    ["a\u0085b.txt", /control or bidirectional/],
    ["a\u007fb.txt", /control or bidirectional/],
    ["invoice\u202Etxt.exe", /control or bidirectional/],
    ["a\u2028b.txt", /control or bidirectional/],
    [`${"x".repeat(256)}.txt`, /longer than 255 bytes/],
  ];
  for (const [name, message] of slips) {
    const shown = (typeof name === "string" ? name : text(name)).replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
    it(`refuses "${shown}"`, async () => {
      await rejectsOpen(
        [
          { name: "fine.txt", data: "ok" },
          { name, data: "evil" },
        ],
        "unsafe-path",
        message,
      );
    });
  }

  it("accepts a 255-byte segment", async () => {
    const name = `${"é".repeat(126)}abc`; // 255 bytes of UTF-8
    expect((await zipOf([{ name }])).zip.entries[0]!.path).toBe(name);
  });

  it("refuses symlinks and special files from Unix hosts", async () => {
    await rejectsOpen(
      [{ name: "link", data: "/etc/passwd", method: 0, unixMode: 0o120777 }],
      "unsafe-path",
      /symbolic link/,
    );
    await rejectsOpen([{ name: "fifo", unixMode: 0o010644 }], "unsafe-path", /special file/);
    const { zip } = await zipOf([
      { name: "file.txt", data: "ok", unixMode: 0o100644 },
      { name: "dir/", method: 0, unixMode: 0o040755 },
    ]);
    expect(zip.entries.map((e) => e.path)).toEqual(["file.txt", "dir"]);
  });

  it("refuses exact duplicates", async () => {
    await rejectsOpen(
      [
        { name: "a.txt", data: "1" },
        { name: "a.txt", data: "2" },
      ],
      "unsafe-path",
      /listed twice/,
    );
    await rejectsOpen([{ name: "d/" }, { name: "d/" }], "unsafe-path", /listed twice/);
  });

  it("refuses names that are duplicates after Unicode NFC normalisation", async () => {
    const nfc = "caf\u00e9.txt";
    const nfd = "cafe\u0301.txt";
    expect(nfc).not.toBe(nfd);
    await rejectsOpen(
      [
        { name: nfc, data: "1" },
        { name: nfd, data: "2" },
      ],
      "unsafe-path",
      /after Unicode normalisation/,
    );
    await rejectsOpen(
      [
        { name: `${nfd}/x`, data: "1" },
        { name: `${nfc}/x`, data: "2" },
      ],
      "unsafe-path",
      /after Unicode normalisation/,
    );
  });

  it("allows names differing only in case (resource URIs are case-sensitive)", async () => {
    const { zip } = await zipOf([
      { name: "A.txt", data: "upper" },
      { name: "a.txt", data: "lower" },
    ]);
    expect(text(await read(zip, "A.txt"))).toBe("upper");
  });

  it("refuses an entry that is both a file and a directory", async () => {
    await rejectsOpen(
      [
        { name: "a", data: "file" },
        { name: "a/b.txt", data: "x" },
      ],
      "unsafe-path",
      /also used as a directory/,
    );
    await rejectsOpen(
      [
        { name: "a/b/c.txt", data: "x" },
        { name: "a/b", data: "file" },
      ],
      "unsafe-path",
      /also used as a directory/,
    );
    await rejectsOpen(
      [{ name: "a/" }, { name: "a", data: "file" }],
      "unsafe-path",
      /one as a file, one as a directory/,
    );
  });

  it("enforces the path length and depth limits", async () => {
    await rejectsOpen([{ name: `${"d/".repeat(20)}f` }], "limit", /nested 21 deep/, { maxDepth: 20 });
    expect((await zipOf([{ name: `${"d/".repeat(19)}f` }], undefined, { maxDepth: 20 })).zip.entries).toHaveLength(1);
    await rejectsOpen([{ name: `${"a".repeat(100)}/${"b".repeat(100)}` }], "limit", /201-byte name; at most 150/, {
      maxPathLength: 150,
    });
  });
});

describe("openZip: limits", () => {
  it("refuses too many entries before reading the central directory", async () => {
    const entries = Array.from({ length: 11 }, (_, i): WriterEntry => ({ name: `f${i}.txt`, data: "x", method: 0 }));
    const bytes = await buildZip(entries);
    const source = memorySource(bytes);
    await expectZipError(openZip(source, { maxEntries: 10 }), "limit", /11 entries; at most 10/);
    expect(source.ranges).toHaveLength(1); // only the end record was read
    expect((await openZip(memorySource(bytes), { maxEntries: 11 })).entries).toHaveLength(11);
  });

  it("applies the default entry limit of 10 000", async () => {
    const entries = Array.from({ length: 10_001 }, (_, i): WriterEntry => ({ name: `f${i}`, method: 0 }));
    await rejectsOpen(entries, "limit", /10001 entries; at most 10000/);
  });

  it("refuses archives whose total uncompressed size is over the limit", async () => {
    const entries = [0, 1, 2].map((i): WriterEntry => ({ name: `f${i}.bin`, data: noise(400_000, i + 1), method: 0 }));
    await rejectsOpen(entries, "limit", /expands to more than 1000000 bytes/, { maxTotalUncompressed: 1_000_000 });
    await rejectsOpen(entries, "limit", /400000 bytes; at most 300000 are allowed per entry/, {
      maxEntryUncompressed: 300_000,
    });
  });

  it("refuses an honest bomb from the directory alone, without inflating anything", async () => {
    const { bytes, source } = await (async () => {
      const built = await buildZip([{ name: "zeros.bin", fill: { byte: 0, length: 200 * MiB } }]);
      return { bytes: built, source: memorySource(built) };
    })();
    expect(bytes.length).toBeLessThan(MiB); // 200 MiB of zeros deflates to ~200 KiB
    await expectZipError(openZip(source), "limit", /expands more than 100:1/);
    expect(source.bytesServed).toBeLessThan(2048); // the end record and one directory entry
  });

  it("refuses an archive that is over the ratio only overall", async () => {
    // Each 1 MiB entry is within the ratio grace; together they expand ~1000:1.
    const entries = Array.from(
      { length: 12 },
      (_, i): WriterEntry => ({ name: `z${i}`, fill: { byte: 0, length: MiB } }),
    );
    await rejectsOpen(entries, "limit", /expands more than 100:1 overall/);
  });

  it("allows small highly compressible files (ratio grace)", async () => {
    const { zip } = await zipOf([{ name: "spaces.txt", data: " ".repeat(500_000) }]);
    expect(entry(zip, "spaces.txt").uncompressedSize / entry(zip, "spaces.txt").compressedSize).toBeGreaterThan(100);
    expect((await read(zip, "spaces.txt")).length).toBe(500_000);
  });

  it("stops inflating a bomb that lies about its size soon after the declared size", async () => {
    const bytes = await buildZip([
      { name: "bomb.bin", fill: { byte: 0, length: 200 * MiB }, lie: { uncompressedSize: MiB } },
    ]);
    const source = memorySource(bytes, 1024);
    const zip = await openZip(source);
    const bomb = zip.entries[0]!;
    expect(bomb.uncompressedSize).toBe(MiB);
    const before = source.bytesServed;
    const produced = await rejectsRead(zip, "bomb.bin", "limit", /inflates past its declared size of 1048576 bytes/);
    expect(produced.length).toBeLessThanOrEqual(MiB);
    // Deflated zeros expand ~1000:1, so the full 200 MiB needs all ~200 KiB of compressed data;
    // stopping after ~1 MiB of output must leave most of it unread. Node's DecompressionStream
    // accepts writes until zlib's queue is full (16 KiB on Node 20, 64 KiB on Node 22) while the
    // inflater pauses its output, so read-ahead is bounded by that queue plus a slice — a constant,
    // whatever the bomb's size — and the inflated bytes held stay bounded too (zlib stops when
    // its output is not read).
    const compressedRead = source.bytesServed - before;
    expect(compressedRead).toBeLessThan(64 * 1024 + 8 * 1024 + 1024);
    expect(compressedRead).toBeLessThan(bomb.compressedSize / 2);
  });

  it("catches a lying size header while streaming, in both directions", async () => {
    const data = noise(100_000);
    const small = await zipOf([{ name: "a.bin", data, lie: { uncompressedSize: 1000 } }]);
    const partial = await rejectsRead(small.zip, "a.bin", "limit", /past its declared size of 1000 bytes/);
    expect(partial.length).toBeLessThanOrEqual(1000);
    const big = await zipOf([{ name: "a.bin", data, lie: { uncompressedSize: 150_000 } }]);
    await rejectsRead(big.zip, "a.bin", "corrupt", /inflated to 100000 bytes but the directory says 150000/);
  });

  it("refuses invalid limit overrides", async () => {
    const bytes = await buildZip([]);
    await expect(openZip(memorySource(bytes), { maxEntries: -1 })).rejects.toThrow(TypeError);
    await expect(openZip(memorySource(bytes), { maxEntries: 1.5 })).rejects.toThrow(TypeError);
  });
});

describe("openZip: random access", () => {
  it("reads only the end record and central directory to open, and one entry's bytes to read it", async () => {
    const entries: WriterEntry[] = [0, 1, 2, 3].map((i) => ({
      name: `part${i}.bin`,
      data: noise(200_000, i + 1),
      method: i % 2 ? 0 : 8,
    }));
    const bytes = await buildZip(entries);
    const source = memorySource(bytes);
    const zip = await openZip(source);
    const span = (r: ByteRange) => r.end - r.start + 1;

    expect(source.ranges).toHaveLength(2); // tail, then central directory
    expect(source.ranges.every((r) => span(r) <= 1024)).toBe(true);
    expect(source.bytesServed).toBeLessThan(2048);

    const target = entry(zip, "part2.bin");
    const before = source.ranges.length;
    const servedBefore = source.bytesServed;
    expect(await read(zip, "part2.bin")).toEqual(noise(200_000, 3));
    const newRanges = source.ranges.slice(before);
    expect(newRanges).toHaveLength(1);
    // Exactly the local header (30 bytes + name) and the entry's compressed data.
    expect(span(newRanges[0]!)).toBe(30 + "part2.bin".length + target.compressedSize);
    expect(source.bytesServed - servedBefore).toBe(span(newRanges[0]!));
    expect(source.ranges.every((r) => span(r) < bytes.length / 3)).toBe(true);
  });

  it("stops reading the source when the consumer cancels", async () => {
    const bytes = await buildZip([{ name: "big.bin", data: noise(2 * MiB), method: 0 }]);
    const source = memorySource(bytes);
    const zip = await openZip(source);
    const reader = zip.open(zip.entries[0]!).getReader();
    await reader.read();
    await reader.cancel();
    expect(source.bytesServed).toBeLessThan(512 * 1024);
  });
});
