// Kept over fflate (no random access) and @zip.js/zip.js (10x the bundle); docs/library-decisions.md.
/**
 * Opens an untrusted zip by random access (end record → central directory → one entry at a time)
 * and refuses, before any entry is inflated, anything unsafe, unsupported or over `ZipLimits`.
 */
import { type CentralRecord, readCentralDirectory, type ZipSource } from "./central-directory.js";
import { type EntryLocation, FLAG_DATA_DESCRIPTOR, FLAG_ENCRYPTED, openEntryStream } from "./entry-stream.js";
import { quoteName, ZipError } from "./errors.js";
import { exceedsRatio, resolveZipLimits, type ZipLimits } from "./limits.js";
import { decodeEntryName, PathRegistry, toSafePath } from "./paths.js";

export type { ZipSource } from "./central-directory.js";
export { DEFAULT_ZIP_LIMITS, type ZipLimits } from "./limits.js";
export { ZIP_ERROR_CODES, ZipError, type ZipErrorCode, type ZipErrorReason } from "./errors.js";

export interface ZipEntry {
  /** Safe relative path, `/`-separated, no trailing slash (also for directories). */
  readonly path: string;
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  /** 0 = stored, 8 = deflate (APPNOTE.TXT 4.4.5); nothing else is accepted. */
  readonly method: 0 | 8;
  readonly crc32: number;
  readonly isDirectory: boolean;
}

export interface ZipArchive {
  /** In central directory order. */
  readonly entries: readonly ZipEntry[];
  /**
   * The entry's content, decompressed. The stream errors with a `ZipError` if the data is
   * corrupt, its CRC-32 does not match, or it inflates past its declared size. Directories are
   * empty streams. Throws `TypeError` for an entry that is not from this archive.
   */
  open(entry: ZipEntry): ReadableStream<Uint8Array>;
}

/** APPNOTE 4.4.4: bit 0 encrypted, 5 patched data, 6 strong encryption, 13 masked local headers. */
const FLAG_PATCHED = 1 << 5;
const FLAG_STRONG_ENCRYPTION = 1 << 6;
const FLAG_UTF8 = 1 << 11;
const FLAG_MASKED_HEADERS = 1 << 13;
const REFUSED_FLAGS = FLAG_ENCRYPTED | FLAG_PATCHED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_HEADERS;

/** Unix `st_mode` lives in the upper 16 bits of the external attributes (APPNOTE 4.4.15). */
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

export async function openZip(source: ZipSource, limits?: Partial<ZipLimits>): Promise<ZipArchive> {
  const bounds = resolveZipLimits(limits);
  if (!Number.isSafeInteger(source.size) || source.size < 0) {
    throw new TypeError("zip source size must be a non-negative integer");
  }
  const directory = await readCentralDirectory(source, bounds);
  const registry = new PathRegistry();
  const located: { location: EntryLocation; isDirectory: boolean }[] = [];
  let total = 0;

  for (const record of directory.records) {
    const name = decodeEntryName(record.rawName, (record.flags & FLAG_UTF8) !== 0, record.index);
    const refuse = (reason: "unsupported" | "corrupt" | "unsafe-path" | "limit", why: string) =>
      new ZipError(reason, `zip entry ${quoteName(name)} ${why}`);
    if (record.flags & REFUSED_FLAGS) throw refuse("unsupported", "is encrypted or uses an unsupported feature");
    if (record.method !== 0 && record.method !== 8) {
      throw refuse("unsupported", `uses compression method ${record.method}; only stored and deflate are supported`);
    }
    const safe = toSafePath(name, bounds);
    checkFileType(record, safe.isDirectory, refuse);
    if (safe.isDirectory && record.uncompressedSize !== 0) throw refuse("corrupt", "is a directory with content");
    if (record.method === 0 && record.compressedSize !== record.uncompressedSize) {
      throw refuse("corrupt", "is stored with differing sizes");
    }
    if (record.uncompressedSize > bounds.maxEntryUncompressed) {
      throw refuse(
        "limit",
        `is ${record.uncompressedSize} bytes; at most ${bounds.maxEntryUncompressed} are allowed per entry`,
      );
    }
    if (exceedsRatio(record.uncompressedSize, record.compressedSize, bounds)) {
      const sizes = `${record.compressedSize} → ${record.uncompressedSize} bytes`;
      throw refuse("limit", `expands more than ${bounds.maxCompressionRatio}:1 (${sizes})`);
    }
    total += record.uncompressedSize;
    if (total > bounds.maxTotalUncompressed) {
      throw new ZipError("limit", `zip expands to more than ${bounds.maxTotalUncompressed} bytes`);
    }
    registry.add(safe);
    const location: EntryLocation = {
      path: safe.path,
      rawName: record.rawName,
      flags: record.flags & (FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR),
      method: record.method,
      crc32: record.crc32,
      compressedSize: record.compressedSize,
      uncompressedSize: record.uncompressedSize,
      localHeaderOffset: record.localHeaderOffset,
      bound: directory.offset,
    };
    located.push({ location, isDirectory: safe.isDirectory });
  }
  registry.checkConflicts();
  if (exceedsRatio(total, source.size, bounds)) {
    const sizes = `${source.size} → ${total} bytes`;
    throw new ZipError("limit", `zip expands more than ${bounds.maxCompressionRatio}:1 overall (${sizes})`);
  }
  assignBounds(
    located.map((l) => l.location),
    directory.offset,
  );

  const entries = new Map<ZipEntry, EntryLocation>();
  for (const { location, isDirectory } of located) {
    const { path, compressedSize, uncompressedSize, method, crc32 } = location;
    entries.set(Object.freeze({ path, compressedSize, uncompressedSize, method, crc32, isDirectory }), location);
  }
  return {
    entries: Object.freeze([...entries.keys()]),
    open(entry) {
      const location = entries.get(entry);
      if (!location) throw new TypeError("open() was given an entry from another archive");
      return openEntryStream(source, location);
    },
  };
}

/** Symlinks could point anywhere once extracted; devices, FIFOs and sockets are never content. */
function checkFileType(
  record: CentralRecord,
  isDirectory: boolean,
  refuse: (reason: "unsafe-path", why: string) => ZipError,
) {
  const type = (record.externalAttributes >>> 16) & S_IFMT;
  if (type === S_IFLNK) throw refuse("unsafe-path", "is a symbolic link");
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw refuse("unsafe-path", "is a special file (device, FIFO or socket)");
  }
  if (type === S_IFDIR && !isDirectory && record.uncompressedSize > 0) {
    throw refuse("unsafe-path", "is marked as a directory but has content");
  }
}

/**
 * Sets each entry's `bound` to the next local header (or the central directory) and refuses
 * overlapping entries: APPNOTE gives every entry its own bytes, and overlap is how "better zip
 * bombs" make a kilobyte of deflate stand for thousands of entries.
 */
function assignBounds(locations: EntryLocation[], directoryOffset: number): void {
  const byOffset = [...locations].sort((a, b) => a.localHeaderOffset - b.localHeaderOffset);
  byOffset.forEach((location, i) => {
    const bound = byOffset[i + 1]?.localHeaderOffset ?? directoryOffset;
    if (location.localHeaderOffset + 30 + location.rawName.length + location.compressedSize > bound) {
      throw new ZipError(
        "corrupt",
        `zip entry ${quoteName(location.path)} overlaps another entry or the central directory`,
      );
    }
    location.bound = bound;
  });
}
