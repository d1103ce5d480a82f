/**
 * Locates and parses the end-of-central-directory records and the central directory (APPNOTE.TXT
 * 4.3.12–4.3.16), ZIP64 included, with ranged reads only. Returns raw records; policy is elsewhere.
 */
import type { ByteRange } from "../storage/blob-store.js";
import { StreamByteReader } from "./byte-reader.js";
import { ZipError } from "./errors.js";
import type { ZipLimits } from "./limits.js";

/** Where the archive bytes come from: any store that can stream an inclusive byte range. */
export interface ZipSource {
  readonly size: number;
  read(range: ByteRange): Promise<ReadableStream<Uint8Array>>;
}

/** One central directory file header, sizes and offset already widened from ZIP64 extras. */
export interface CentralRecord {
  index: number;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
  externalAttributes: number;
  rawName: Uint8Array;
}

export interface CentralDirectory {
  records: CentralRecord[];
  /** First byte of the central directory: every entry's data must end before it. */
  offset: number;
}

const SIG_CENTRAL = 0x02014b50;
const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const EOCD_SIZE = 22;
const ZIP64_LOCATOR_SIZE = 20;
const ZIP64_EOCD_MIN = 56;
/** First EOCD search window: the record, a ZIP64 locator and a short comment. */
const SMALL_TAIL = 1024;
const CENTRAL_HEADER_SIZE = 46;
/** APPNOTE 4.5.3: the ZIP64 extended information extra field. */
export const ZIP64_EXTRA_ID = 0x0001;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;

export const corrupt = (detail: string) => new ZipError("corrupt", `not a valid zip archive: ${detail}`);

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A little-endian 64-bit field as a safe integer; anything past 2^53 is refused, not rounded. */
export function readU64(dv: DataView, offset: number): number {
  const low = dv.getUint32(offset, true);
  const high = dv.getUint32(offset + 4, true);
  if (high > 0x1fffff) throw corrupt("a 64-bit size or offset is implausibly large");
  return high * 2 ** 32 + low;
}

/** Exactly `length` bytes at `start`, via one ranged read. */
export async function readAt(source: ZipSource, start: number, length: number, what: string): Promise<Uint8Array> {
  if (length === 0) return new Uint8Array(0);
  if (start < 0 || start + length > source.size) throw corrupt(`${what} lies outside the archive`);
  const stream = await source.read({ start, end: start + length - 1 });
  const reader = new StreamByteReader(stream, () => corrupt(`${what} is truncated`));
  try {
    return await reader.exact(length);
  } finally {
    await reader.cancel();
  }
}

/** Walks an extra field block (APPNOTE 4.5.1) and returns the data of the first field with `id`. */
export function findExtraField(extra: Uint8Array, id: number): DataView | undefined {
  const dv = view(extra);
  // Fewer than 4 trailing bytes is padding (zipalign pads local extras with zeros), not an error.
  for (let at = 0; at + 4 <= extra.length; ) {
    const fieldId = dv.getUint16(at, true);
    const size = dv.getUint16(at + 2, true);
    if (at + 4 + size > extra.length) throw corrupt("an extra field overruns its block");
    if (fieldId === id) return new DataView(extra.buffer, extra.byteOffset + at + 4, size);
    at += 4 + size;
  }
  return undefined;
}

interface EndRecord {
  entries: number;
  cdSize: number;
  cdOffset: number;
  /** Where the central directory must end: the ZIP64 record if there is one, else the EOCD. */
  cdEnd: number;
}

/**
 * Finds the EOCD (APPNOTE 4.3.16): the last record, followed only by its comment (at most 64 KiB).
 * Most archives have no comment, so a small tail is tried before the full 64 KiB search window.
 */
async function findEndRecord(source: ZipSource): Promise<{ tail: Uint8Array; tailStart: number; at: number }> {
  const size = source.size;
  if (size < EOCD_SIZE) throw corrupt("too short to hold an end of central directory record");
  for (const window of [SMALL_TAIL, EOCD_SIZE + U16_MAX + ZIP64_LOCATOR_SIZE]) {
    const tailLength = Math.min(size, window);
    const tailStart = size - tailLength;
    const tail = await readAt(source, tailStart, tailLength, "end of archive");
    const dv = view(tail);
    // Scan backwards; the comment length must reach exactly to the end, which rejects a stray
    // signature inside the comment and any trailing garbage after the archive.
    for (let i = tail.length - EOCD_SIZE; i >= 0; i--) {
      if (dv.getUint32(i, true) === SIG_EOCD && dv.getUint16(i + 20, true) === tail.length - i - EOCD_SIZE) {
        // Keep the ZIP64 locator that may precede the EOCD inside the tail we hand back.
        if (i >= ZIP64_LOCATOR_SIZE || tailStart === 0) return { tail, tailStart, at: i };
        break;
      }
    }
    if (tailLength === size) break;
  }
  throw corrupt("no end of central directory record");
}

async function readEndRecord(source: ZipSource): Promise<EndRecord> {
  const { tail, tailStart, at } = await findEndRecord(source);
  const dv = view(tail);
  const disk = dv.getUint16(at + 4, true);
  const cdDisk = dv.getUint16(at + 6, true);
  const diskEntries = dv.getUint16(at + 8, true);
  let entries = dv.getUint16(at + 10, true);
  let cdSize = dv.getUint32(at + 12, true);
  let cdOffset = dv.getUint32(at + 16, true);
  const eocdOffset = tailStart + at;
  let cdEnd = eocdOffset;

  const locatorAt = at - ZIP64_LOCATOR_SIZE;
  if (locatorAt >= 0 && dv.getUint32(locatorAt, true) === SIG_ZIP64_LOCATOR) {
    // APPNOTE 4.3.15: the locator points at the ZIP64 EOCD record (4.3.14), which must sit
    // directly before it. Saturated 16/32-bit fields are taken from it; others must agree.
    if (dv.getUint32(locatorAt + 4, true) !== 0 || dv.getUint32(locatorAt + 16, true) > 1) {
      throw new ZipError("unsupported", "split (multi-disk) zip archives are not supported");
    }
    const recordOffset = readU64(dv, locatorAt + 8);
    const record = view(await readAt(source, recordOffset, ZIP64_EOCD_MIN, "ZIP64 end record"));
    if (record.getUint32(0, true) !== SIG_ZIP64_EOCD) throw corrupt("bad ZIP64 end of central directory signature");
    if (recordOffset + 12 + readU64(record, 4) !== eocdOffset - ZIP64_LOCATOR_SIZE) {
      throw corrupt("ZIP64 end record does not end at its locator");
    }
    const onOneDisk = record.getUint32(16, true) === 0 && record.getUint32(20, true) === 0;
    if (!onOneDisk || readU64(record, 24) !== readU64(record, 32)) {
      throw new ZipError("unsupported", "split (multi-disk) zip archives are not supported");
    }
    const wide = { entries: readU64(record, 32), cdSize: readU64(record, 40), cdOffset: readU64(record, 48) };
    const agree = (narrow: number, max: number, value: number) => narrow === max || narrow === value;
    const agreeing =
      agree(entries, U16_MAX, wide.entries) &&
      agree(cdSize, U32_MAX, wide.cdSize) &&
      agree(cdOffset, U32_MAX, wide.cdOffset);
    if (!agreeing) {
      throw corrupt("ZIP64 end record disagrees with the end of central directory record");
    }
    ({ entries, cdSize, cdOffset } = wide);
    cdEnd = recordOffset;
  } else {
    if (disk !== 0 || cdDisk !== 0 || diskEntries !== entries) {
      throw new ZipError("unsupported", "split (multi-disk) zip archives are not supported");
    }
    if (cdSize === U32_MAX || cdOffset === U32_MAX) throw corrupt("ZIP64 end of central directory locator missing");
  }
  // The directory must end exactly where the end records begin. This refuses prepended data
  // (self-extractors) and archives whose offsets would let two readers see different entries.
  if (cdOffset + cdSize !== cdEnd) throw corrupt("central directory is not where the end record says");
  return { entries, cdSize, cdOffset, cdEnd };
}

/** Reads the whole central directory as one streamed range, never holding more than a record. */
export async function readCentralDirectory(source: ZipSource, limits: Readonly<ZipLimits>): Promise<CentralDirectory> {
  const end = await readEndRecord(source);
  if (end.entries > limits.maxEntries) {
    throw new ZipError("limit", `zip lists ${end.entries} entries; at most ${limits.maxEntries} are allowed`);
  }
  if (end.cdSize < end.entries * CENTRAL_HEADER_SIZE)
    throw corrupt("central directory is too small for its entry count");
  const records: CentralRecord[] = [];
  if (end.entries === 0) {
    if (end.cdSize !== 0) throw corrupt("central directory is larger than its entry count says");
    return { records, offset: end.cdOffset };
  }

  const truncated = () => corrupt("central directory is shorter than its entry count says");
  const reader = new StreamByteReader(await source.read({ start: end.cdOffset, end: end.cdEnd - 1 }), truncated);
  try {
    let consumed = 0;
    for (let index = 0; index < end.entries; index++) {
      const header = await reader.exact(CENTRAL_HEADER_SIZE);
      const dv = view(header);
      if (dv.getUint32(0, true) !== SIG_CENTRAL) throw corrupt(`bad central directory signature at entry #${index}`);
      const nameLength = dv.getUint16(28, true);
      const extraLength = dv.getUint16(30, true);
      const commentLength = dv.getUint16(32, true);
      if (nameLength > limits.maxPathLength) {
        const detail = `zip entry #${index} has a ${nameLength}-byte name; at most ${limits.maxPathLength} are allowed`;
        throw new ZipError("limit", detail);
      }
      const rawName = await reader.exact(nameLength);
      const extra = await reader.exact(extraLength);
      await reader.skip(commentLength);
      consumed += CENTRAL_HEADER_SIZE + nameLength + extraLength + commentLength;
      records.push(parseRecord(index, dv, rawName, extra));
    }
    if (consumed !== end.cdSize) throw corrupt("central directory size does not match its entries");
  } finally {
    await reader.cancel();
  }
  return { records, offset: end.cdOffset };
}

/** APPNOTE 4.3.12 fields; 4.5.3: saturated sizes/offset/disk come, in that order, from the ZIP64 extra. */
function parseRecord(index: number, dv: DataView, rawName: Uint8Array, extra: Uint8Array): CentralRecord {
  let uncompressedSize = dv.getUint32(24, true);
  let compressedSize = dv.getUint32(20, true);
  let localHeaderOffset = dv.getUint32(42, true);
  let diskStart = dv.getUint16(34, true);
  const needsZip64 = [uncompressedSize, compressedSize, localHeaderOffset].includes(U32_MAX) || diskStart === U16_MAX;
  if (needsZip64) {
    const zip64 = findExtraField(extra, ZIP64_EXTRA_ID);
    if (!zip64) throw corrupt(`entry #${index} needs a ZIP64 extra field and has none`);
    let at = 0;
    const next64 = () => {
      if (at + 8 > zip64.byteLength) throw corrupt(`entry #${index} has a short ZIP64 extra field`);
      const value = readU64(zip64, at);
      at += 8;
      return value;
    };
    if (uncompressedSize === U32_MAX) uncompressedSize = next64();
    if (compressedSize === U32_MAX) compressedSize = next64();
    if (localHeaderOffset === U32_MAX) localHeaderOffset = next64();
    if (diskStart === U16_MAX) {
      if (at + 4 > zip64.byteLength) throw corrupt(`entry #${index} has a short ZIP64 extra field`);
      diskStart = zip64.getUint32(at, true);
    }
  }
  if (diskStart !== 0) throw new ZipError("unsupported", "split (multi-disk) zip archives are not supported");
  return {
    index,
    flags: dv.getUint16(8, true),
    method: dv.getUint16(10, true),
    crc32: dv.getUint32(16, true),
    compressedSize,
    uncompressedSize,
    localHeaderOffset,
    externalAttributes: dv.getUint32(38, true),
    rawName,
  };
}
