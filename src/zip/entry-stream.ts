/**
 * Streams one entry: reads its local header (APPNOTE.TXT 4.3.7) and data in a single ranged read,
 * inflates, and holds the output to the central directory's size and CRC-32 as it flows.
 */
import { StreamByteReader } from "./byte-reader.js";
import { inflateRaw } from "./inflate.js";
import { Crc32 } from "./crc32.js";
import { findExtraField, readU64, ZIP64_EXTRA_ID, type ZipSource } from "./central-directory.js";
import { quoteName, ZipError } from "./errors.js";

/** What the central directory says about an entry, plus where its bytes must end. */
export interface EntryLocation {
  path: string;
  rawName: Uint8Array;
  flags: number;
  method: 0 | 8;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
  /** The next entry's local header offset, or the central directory's: this entry's bytes stop here. */
  bound: number;
}

const SIG_LOCAL = 0x04034b50;
const LOCAL_HEADER_SIZE = 30;
const U32_MAX = 0xffffffff;
export const FLAG_ENCRYPTED = 1 << 0;
export const FLAG_DATA_DESCRIPTOR = 1 << 3;
/**
 * Compressed input goes to the inflater in slices of this size. Deflate expands at most ~1032:1,
 * so one slice yields at most ~4 MiB: that bounds the output buffered and the work done past a
 * limit before the stream stops.
 */
const INFLATE_SLICE = 4096;
/** Stored data needs no such bound; larger slices just mean fewer chunks. */
const STORED_SLICE = 64 * 1024;

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

/**
 * The entry's bytes, decompressed. Output beyond the declared size errors at once: the declared
 * sizes already passed every `ZipLimits` check, so this enforces them on the actual bytes too.
 */
export function openEntryStream(source: ZipSource, entry: EntryLocation): ReadableStream<Uint8Array> {
  const fail = (reason: "corrupt" | "limit", detail: string, cause?: unknown) =>
    new ZipError(reason, `zip entry ${quoteName(entry.path)}: ${detail}`, { cause });
  let input: StreamByteReader | undefined;
  let output: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let produced = 0;
  let streaming = false;
  const crc = new Crc32();

  const start = async () => {
    input = new StreamByteReader(await source.read({ start: entry.localHeaderOffset, end: entry.bound - 1 }), () =>
      fail("corrupt", "archive is truncated"),
    );
    const dataLength = await readLocalHeader(input, entry, fail);
    if (entry.localHeaderOffset + dataLength + entry.compressedSize > entry.bound) {
      throw fail("corrupt", "data overlaps the next entry");
    }
    // An empty file may be "deflated" to zero bytes by some writers; there is nothing to inflate.
    const inflate = entry.method === 8 && !(entry.compressedSize === 0 && entry.uncompressedSize === 0);
    const data = input.take(entry.compressedSize, inflate ? INFLATE_SLICE : STORED_SLICE);
    return (inflate ? inflateRaw(data) : data).getReader();
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          output ??= await start();
          streaming = true;
          for (;;) {
            const { done, value } = await output.read();
            if (done) {
              if (produced !== entry.uncompressedSize) {
                throw fail("corrupt", `inflated to ${produced} bytes but the directory says ${entry.uncompressedSize}`);
              }
              if (crc.value !== entry.crc32) throw fail("corrupt", "CRC-32 mismatch");
              controller.close();
              return;
            }
            if (value.length === 0) continue;
            produced += value.length;
            if (produced > entry.uncompressedSize) {
              throw fail("limit", `inflates past its declared size of ${entry.uncompressedSize} bytes`);
            }
            crc.update(value);
            controller.enqueue(value);
            return;
          }
        } catch (err) {
          await output?.cancel(err).catch(() => undefined);
          await input?.cancel(err);
          // Failures to reach the bytes (the store's own errors) are not the archive's fault.
          if (!streaming || err instanceof ZipError || input?.isSourceError(err)) throw err;
          // Anything else came from the inflater: the deflate data itself is bad.
          throw fail(
            "corrupt",
            `compressed data is invalid (${err instanceof Error ? err.message : String(err)})`,
            err,
          );
        }
      },
      async cancel(reason) {
        await output?.cancel(reason).catch(() => undefined);
        await input?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Checks the local header against the central directory and returns the header's total length.
 * A mismatch means two readers could see two different files, so it is refused (APPNOTE 4.4.4:
 * with bit 3 set the local CRC and sizes are placeholders, and the directory values rule).
 */
async function readLocalHeader(
  input: StreamByteReader,
  entry: EntryLocation,
  fail: (reason: "corrupt", detail: string) => ZipError,
): Promise<number> {
  const header = await input.exact(LOCAL_HEADER_SIZE);
  const dv = new DataView(header.buffer, header.byteOffset, header.byteLength);
  if (dv.getUint32(0, true) !== SIG_LOCAL) throw fail("corrupt", "bad local header signature");
  const flags = dv.getUint16(6, true);
  const sharedFlags = FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR;
  if ((flags & sharedFlags) !== (entry.flags & sharedFlags)) {
    throw fail("corrupt", "local header flags differ from the directory");
  }
  if (dv.getUint16(8, true) !== entry.method) throw fail("corrupt", "local header method differs from the directory");
  const nameLength = dv.getUint16(26, true);
  const extraLength = dv.getUint16(28, true);
  const name = await input.exact(nameLength);
  if (!sameBytes(name, entry.rawName)) throw fail("corrupt", "local header name differs from the directory");
  const extra = await input.exact(extraLength);
  if (!(flags & FLAG_DATA_DESCRIPTOR)) {
    let compressed = dv.getUint32(18, true);
    let uncompressed = dv.getUint32(22, true);
    if (compressed === U32_MAX || uncompressed === U32_MAX) {
      // APPNOTE 4.5.3: in a local header the ZIP64 field carries both sizes, uncompressed first.
      const zip64 = findExtraField(extra, ZIP64_EXTRA_ID);
      if (!zip64 || zip64.byteLength < 16) throw fail("corrupt", "local header needs a ZIP64 extra field");
      uncompressed = readU64(zip64, 0);
      compressed = readU64(zip64, 8);
    }
    const crc = dv.getUint32(14, true);
    if (crc !== entry.crc32 || compressed !== entry.compressedSize || uncompressed !== entry.uncompressedSize) {
      throw fail("corrupt", "local header CRC or sizes differ from the directory");
    }
  }
  return LOCAL_HEADER_SIZE + nameLength + extraLength;
}
