/**
 * A small zip writer for tests: honest archives (stored/deflate, optional ZIP64 fields) and hostile
 * ones (raw names, lying headers, symlinks, overlaps, bombs), plus an in-memory ranged source.
 */
import { constants, crc32, deflateRawSync } from "node:zlib";
import type { ByteRange } from "../../src/storage/blob-store.js";

export interface WriterEntry {
  /** Raw name: a string is written as UTF-8, bytes exactly as given (`../x`, `C:\x`, NUL…). */
  name: string | Uint8Array<ArrayBuffer>;
  data?: Uint8Array<ArrayBuffer> | string;
  /** Content made on the fly, `length` copies of `byte`, deflated chunk by chunk (bombs). */
  fill?: { byte: number; length: number };
  /** Bytes written verbatim as the (already compressed) payload; CRC and size then come from `lie`. */
  rawData?: Uint8Array<ArrayBuffer>;
  /** 0 stored, 8 deflate (default); any other number is written as is with deflated data. */
  method?: number;
  /** General-purpose bit 11; default: set when a string name is not ASCII. */
  utf8?: boolean;
  /** Extra general-purpose flags OR-ed into both headers (1 = encrypted). */
  flags?: number;
  /** Unix st_mode for the upper 16 bits of the external attributes (0o120777 = symlink). */
  unixMode?: number;
  /** Bit 3: zero CRC/sizes in the local header and a data descriptor after the data. */
  dataDescriptor?: boolean;
  /** Write sizes and offset as 0xFFFFFFFF with a ZIP64 extra field (both headers). */
  zip64?: boolean;
  /** Lies written to both headers instead of the true values. */
  lie?: { crc32?: number; compressedSize?: number; uncompressedSize?: number };
  /** Overrides for the local header only (to make it disagree with the directory). */
  local?: { name?: string | Uint8Array<ArrayBuffer>; crc32?: number; method?: number };
  /** Write no local header; the directory entry points at entry #n's instead (overlap). */
  shareLocalWith?: number;
}

export interface WriterOptions {
  comment?: string;
  /** Always write ZIP64 end records (with saturated classic fields). */
  zip64?: boolean;
  /** Bytes appended after the end record. */
  trailing?: Uint8Array;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32Update(crc: number, bytes: Uint8Array): number {
  let c = ~crc;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const asBytes = (v: string | Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> => (typeof v === "string" ? utf8(v) : v);

class Bytes {
  readonly parts: Uint8Array[] = [];
  length = 0;
  push(part: Uint8Array) {
    this.parts.push(part);
    this.length += part.length;
  }
  record(size: number, fill: (dv: DataView) => void) {
    const out = new Uint8Array(size);
    fill(new DataView(out.buffer));
    this.push(out);
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) out.set(p, at), (at += p.length);
    return out;
  }
}

const setU64 = (dv: DataView, at: number, v: number) => dv.setBigUint64(at, BigInt(v), true);

/** Deflates chunks through CompressionStream without holding the uncompressed whole. */
async function deflate(
  chunks: Iterable<Uint8Array<ArrayBuffer>>,
): Promise<{ data: Uint8Array; crc: number; size: number }> {
  const cs = new CompressionStream("deflate-raw");
  const writer = cs.writable.getWriter();
  const out = new Response(cs.readable).arrayBuffer();
  let crc = 0;
  let size = 0;
  for (const chunk of chunks) {
    crc = crc32Update(crc, chunk);
    size += chunk.length;
    await writer.ready;
    void writer.write(chunk);
  }
  await writer.close();
  return { data: new Uint8Array(await out), crc, size };
}

function* fillChunks(byte: number, length: number): Generator<Uint8Array<ArrayBuffer>> {
  const chunk = new Uint8Array(Math.min(length, 1 << 20)).fill(byte);
  for (let left = length; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
}

/**
 * `length` copies of `byte`, deflated: one 1 MiB chunk is deflated once (full flush: byte-aligned,
 * referring only to itself) and its bytes repeated, then a final block for the rest. Deflating and
 * checksumming a 200 MiB bomb byte by byte took 30 s of CPU and more on a loaded 2-core machine.
 */
function deflateFill(byte: number, length: number) {
  const chunk = new Uint8Array(Math.min(length, 1 << 20)).fill(byte);
  const whole = chunk.length === 0 ? 0 : Math.floor(length / chunk.length);
  const rest = chunk.subarray(0, length - whole * chunk.length);
  const segment = whole > 0 ? deflateRawSync(chunk, { finishFlush: constants.Z_FULL_FLUSH }) : new Uint8Array(0);
  const tail = deflateRawSync(rest);
  const out = new Bytes();
  let crc = 0;
  for (let i = 0; i < whole; i++) {
    out.push(segment);
    crc = crc32(chunk, crc);
  }
  out.push(tail);
  return { data: out.concat(), crc: crc32(rest, crc), size: length };
}

async function payload(e: WriterEntry) {
  if (e.rawData) return { data: e.rawData, crc: 0, size: 0 };
  if (e.fill && (e.method ?? 8) !== 0) return deflateFill(e.fill.byte, e.fill.length);
  const chunks = e.fill
    ? [...fillChunks(e.fill.byte, e.fill.length)]
    : [e.data === undefined ? new Uint8Array(0) : asBytes(e.data)];
  if ((e.method ?? 8) === 0) {
    const raw = chunks.length === 1 ? chunks[0]! : new Bytes();
    if (raw instanceof Bytes) chunks.forEach((c) => raw.push(c));
    const data = raw instanceof Bytes ? raw.concat() : raw;
    return { data, crc: crc32Update(0, data), size: data.length };
  }
  return deflate(chunks);
}

/** Builds a complete archive in memory. */
export async function buildZip(entries: WriterEntry[], options: WriterOptions = {}): Promise<Uint8Array> {
  const out = new Bytes();
  const central = new Bytes();
  const offsets: number[] = [];
  for (const e of entries) {
    const name = asBytes(e.name);
    const { data, crc, size } = await payload(e);
    const flags =
      (e.flags ?? 0) |
      ((e.utf8 ?? (typeof e.name === "string" && /[^\x00-\x7f]/.test(e.name))) ? 1 << 11 : 0) |
      (e.dataDescriptor ? 8 : 0);
    const method = e.method ?? 8;
    const crcOut = e.lie?.crc32 ?? crc;
    const csize = e.lie?.compressedSize ?? data.length;
    const usize = e.lie?.uncompressedSize ?? size;
    const zip64Extra = (withOffset: number | undefined) => {
      const extra = new Uint8Array(4 + 16 + (withOffset === undefined ? 0 : 8));
      const dv = new DataView(extra.buffer);
      dv.setUint16(0, 1, true);
      dv.setUint16(2, extra.length - 4, true);
      setU64(dv, 4, usize);
      setU64(dv, 12, csize);
      if (withOffset !== undefined) setU64(dv, 20, withOffset);
      return extra;
    };
    let offset = out.length;
    if (e.shareLocalWith !== undefined) {
      offset = offsets[e.shareLocalWith]!;
    } else {
      const localName = e.local?.name === undefined ? name : asBytes(e.local.name);
      const extra = e.zip64 ? zip64Extra(undefined) : new Uint8Array(0);
      out.record(30, (dv) => {
        dv.setUint32(0, 0x04034b50, true);
        dv.setUint16(4, e.zip64 ? 45 : 20, true);
        dv.setUint16(6, flags, true);
        dv.setUint16(8, e.local?.method ?? method, true);
        dv.setUint32(14, e.dataDescriptor ? 0 : (e.local?.crc32 ?? crcOut), true);
        dv.setUint32(18, e.dataDescriptor ? 0 : e.zip64 ? 0xffffffff : csize, true);
        dv.setUint32(22, e.dataDescriptor ? 0 : e.zip64 ? 0xffffffff : usize, true);
        dv.setUint16(26, localName.length, true);
        dv.setUint16(28, extra.length, true);
      });
      out.push(localName);
      out.push(extra);
      out.push(data);
      if (e.dataDescriptor) {
        out.record(16, (dv) => {
          dv.setUint32(0, 0x08074b50, true);
          dv.setUint32(4, crcOut, true);
          dv.setUint32(8, csize, true);
          dv.setUint32(12, usize, true);
        });
      }
    }
    offsets.push(offset);
    const extra = e.zip64 ? zip64Extra(offset) : new Uint8Array(0);
    central.record(46, (dv) => {
      dv.setUint32(0, 0x02014b50, true);
      dv.setUint16(4, ((e.unixMode === undefined ? 0 : 3) << 8) | 45, true);
      dv.setUint16(6, e.zip64 ? 45 : 20, true);
      dv.setUint16(8, flags, true);
      dv.setUint16(10, method, true);
      dv.setUint32(16, crcOut, true);
      dv.setUint32(20, e.zip64 ? 0xffffffff : csize, true);
      dv.setUint32(24, e.zip64 ? 0xffffffff : usize, true);
      dv.setUint16(28, name.length, true);
      dv.setUint16(30, extra.length, true);
      dv.setUint32(38, ((e.unixMode ?? 0) << 16) >>> 0, true);
      dv.setUint32(42, e.zip64 ? 0xffffffff : offset, true);
    });
    central.push(name);
    central.push(extra);
  }
  const cdOffset = out.length;
  for (const part of central.parts) out.push(part);
  const comment = utf8(options.comment ?? "");
  if (options.zip64) {
    const recordOffset = out.length;
    out.record(56, (dv) => {
      dv.setUint32(0, 0x06064b50, true);
      setU64(dv, 4, 44);
      dv.setUint16(12, 45, true);
      dv.setUint16(14, 45, true);
      setU64(dv, 24, entries.length);
      setU64(dv, 32, entries.length);
      setU64(dv, 40, central.length);
      setU64(dv, 48, cdOffset);
    });
    out.record(20, (dv) => {
      dv.setUint32(0, 0x07064b50, true);
      setU64(dv, 8, recordOffset);
      dv.setUint32(16, 1, true);
    });
  }
  out.record(22, (dv) => {
    dv.setUint32(0, 0x06054b50, true);
    dv.setUint16(8, options.zip64 ? 0xffff : entries.length, true);
    dv.setUint16(10, options.zip64 ? 0xffff : entries.length, true);
    dv.setUint32(12, options.zip64 ? 0xffffffff : central.length, true);
    dv.setUint32(16, options.zip64 ? 0xffffffff : cdOffset, true);
    dv.setUint16(20, comment.length, true);
  });
  out.push(comment);
  if (options.trailing) out.push(options.trailing);
  return out.concat();
}

/** A ranged source over bytes that records every range asked for and every byte actually pulled. */
export interface RecordingSource {
  size: number;
  read(range: ByteRange): Promise<ReadableStream<Uint8Array>>;
  readonly ranges: ByteRange[];
  /** Bytes handed out so far (streams are pulled lazily, so a cancelled read counts only its pulls). */
  bytesServed: number;
}

export function memorySource(bytes: Uint8Array, chunkSize = 64 * 1024): RecordingSource {
  const source: RecordingSource = {
    size: bytes.length,
    ranges: [],
    bytesServed: 0,
    async read(range) {
      if (range.start < 0 || range.end < range.start || range.end >= bytes.length) {
        throw new RangeError(`bad range ${range.start}-${range.end} for ${bytes.length} bytes`);
      }
      source.ranges.push({ ...range });
      let at = range.start;
      return new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (at > range.end) return controller.close();
            const chunk = bytes.slice(at, Math.min(range.end + 1, at + chunkSize));
            at += chunk.length;
            source.bytesServed += chunk.length;
            controller.enqueue(chunk);
          },
        },
        { highWaterMark: 0 },
      );
    },
  };
  return source;
}

/** Reads a stream to the end, returning the bytes (or the error and how many bytes came first). */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; error?: unknown }> {
  const parts = new Bytes();
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: parts.concat() };
      parts.push(value);
    }
  } catch (error) {
    return { bytes: parts.concat(), error };
  }
}
