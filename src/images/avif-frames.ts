/**
 * The real frame sizes inside an AVIF (issue 41): its `ispe` box is only a claim, and libheif
 * allocates what the AV1 bitstream says. A 1 KB file whose `ispe` said 64×48 held a 6000×6000
 * frame: libvips' pixel limit read the claim, and the decode took 622 MiB before it found the
 * mismatch. So each AV1 item's sequence header (its largest frame, `max_frame_width/height`) and
 * each grid's canvas are read from the item data itself, through `iinf`/`iloc`, before decoding.
 * Runtime-free: the caller hands a `read(offset, length)` over a file or a buffer.
 *
 * Fails closed: an AV1 item whose sequence header cannot be found, data it cannot locate, or a
 * box it cannot follow is `undefined` (the caller refuses the source rather than decode blind).
 */

export interface FrameSize {
  width: number;
  height: number;
}

/** Bytes `[offset, offset + length)` of the source; fewer at its end. */
export type ReadAt = (offset: number, length: number) => Promise<Uint8Array>;

/** Where the `meta` box is looked for, and how large it may be. */
const HEAD_BYTES = 64 * 1024;
const MAX_META_BYTES = 1024 * 1024;
/** An item's leading bytes read for its sequence header (it comes first, after a delimiter at most). */
const ITEM_HEAD_BYTES = 4096;

const u16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u32 = (b: Uint8Array, i: number) => (u16(b, i) * 0x10000 + u16(b, i + 2)) >>> 0;
const uint = (b: Uint8Array, i: number, size: number) =>
  size === 0
    ? 0
    : size === 2
      ? u16(b, i)
      : size === 4
        ? u32(b, i)
        : size === 8
          ? u32(b, i) * 2 ** 32 + u32(b, i + 4)
          : NaN;
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

interface Box {
  type: string;
  /** Where its content starts (after the header) and ends, in the array read. */
  body: number;
  end: number;
}

/** The ISO BMFF boxes in b[start, end); stops at one that does not fit. */
function* boxes(b: Uint8Array, start: number, end: number): Generator<Box> {
  for (let at = start; at + 8 <= end; ) {
    let size = u32(b, at);
    let body = at + 8;
    if (size === 1) {
      if (at + 16 > end) return;
      size = uint(b, at + 8, 8);
      body = at + 16;
    } else if (size === 0) size = end - at;
    if (size < body - at || at + size > end) return;
    yield { type: ascii(b, at + 4, 4), body, end: at + size };
    at += size;
  }
}

const child = (b: Uint8Array, box: Box, type: string, fullBox = false) => {
  for (const c of boxes(b, box.body + (fullBox ? 4 : 0), box.end)) if (c.type === type) return c;
  return undefined;
};

/** `iinf`: each item's id and type. */
function itemTypes(b: Uint8Array, iinf: Box): Map<number, string> | undefined {
  const types = new Map<number, string>();
  const start = iinf.body + 4 + (b[iinf.body] === 0 ? 2 : 4);
  for (const infe of boxes(b, start, iinf.end)) {
    if (infe.type !== "infe") continue;
    const version = b[infe.body]!;
    if (version < 2) return undefined; // older entries carry no item type: not an AVIF
    const id = version === 2 ? u16(b, infe.body + 4) : u32(b, infe.body + 4);
    const at = infe.body + 4 + (version === 2 ? 2 : 4) + 2;
    types.set(id, ascii(b, at, 4));
  }
  return types;
}

interface Extent {
  offset: number;
  length: number;
}

/** `iloc`: each item's extents, as file offsets (construction 0) or `idat` offsets (1); other ways: absent. */
function itemLocations(b: Uint8Array, iloc: Box, idat: Box | undefined): Map<number, Extent[]> {
  const located = new Map<number, Extent[]>();
  const version = b[iloc.body]!;
  let at = iloc.body + 4;
  const offsetSize = b[at]! >> 4;
  const lengthSize = b[at]! & 15;
  const baseSize = b[at + 1]! >> 4;
  const indexSize = version === 1 || version === 2 ? b[at + 1]! & 15 : 0;
  at += 2;
  const count = version < 2 ? u16(b, at) : u32(b, at);
  at += version < 2 ? 2 : 4;
  for (let n = 0; n < count && at < iloc.end; n++) {
    const id = version < 2 ? u16(b, at) : u32(b, at);
    at += version < 2 ? 2 : 4;
    let construction = 0;
    if (version === 1 || version === 2) {
      construction = u16(b, at) & 15;
      at += 2;
    }
    at += 2; // data_reference_index
    const base = uint(b, at, baseSize);
    at += baseSize;
    const extentCount = u16(b, at);
    at += 2;
    const extents: Extent[] = [];
    for (let e = 0; e < extentCount; e++) {
      at += indexSize;
      const offset = uint(b, at, offsetSize);
      at += offsetSize;
      const length = uint(b, at, lengthSize);
      at += lengthSize;
      extents.push({ offset: base + offset, length });
    }
    if (at > iloc.end) break;
    if (construction === 0) located.set(id, extents);
    // idat offsets are into the idat box's content, which was read with the meta box.
    else if (construction === 1 && idat)
      located.set(
        id,
        extents.map((x) => ({ ...x, offset: -1 - (idat.body + x.offset) })),
      );
  }
  return located;
}

/** `av1C`'s configOBUs of each item, through `ipma` (libheif hands them to the decoder too). */
function configObus(b: Uint8Array, iprp: Box): Map<number, Uint8Array[]> {
  const found = new Map<number, Uint8Array[]>();
  const ipco = child(b, iprp, "ipco");
  const ipma = child(b, iprp, "ipma");
  if (!ipco || !ipma) return found;
  const properties = [...boxes(b, ipco.body, ipco.end)];
  const version = b[ipma.body]!;
  const wide = (b[ipma.body + 3]! & 1) === 1;
  let at = ipma.body + 4;
  const count = u32(b, at);
  at += 4;
  for (let n = 0; n < count && at < ipma.end; n++) {
    const id = version < 1 ? u16(b, at) : u32(b, at);
    at += version < 1 ? 2 : 4;
    const associations = b[at++]!;
    for (let a = 0; a < associations; a++) {
      const index = wide ? u16(b, at) & 0x7fff : b[at]! & 0x7f;
      at += wide ? 2 : 1;
      const property = properties[index - 1];
      if (property?.type === "av1C" && property.end - property.body > 4) {
        found.set(id, [...(found.get(id) ?? []), b.subarray(property.body + 4, property.end)]);
      }
    }
  }
  return found;
}

/** An MSB-first bit reader over one OBU's payload. */
function bits(b: Uint8Array) {
  let at = 0;
  const read = (n: number) => {
    let value = 0;
    for (let i = 0; i < n; i++, at++) {
      if (at >> 3 >= b.length) throw new RangeError("sequence header truncated");
      value = value * 2 + ((b[at >> 3]! >> (7 - (at & 7))) & 1);
    }
    return value;
  };
  const uvlc = () => {
    let zeros = 0;
    while (read(1) === 0) if (++zeros >= 32) throw new RangeError("bad uvlc");
    return zeros ? read(zeros) : 0;
  };
  return { read, uvlc };
}

/** An AV1 sequence header's largest frame (AV1 spec §5.5.1). */
function sequenceHeaderFrame(payload: Uint8Array): FrameSize {
  const { read, uvlc } = bits(payload);
  read(3); // seq_profile
  read(1); // still_picture
  const reduced = read(1);
  if (reduced) read(5);
  else {
    let decoderModel = 0;
    let bufferDelayLength = 0;
    if (read(1)) {
      // timing_info
      read(32);
      read(32);
      if (read(1)) uvlc();
      decoderModel = read(1);
      if (decoderModel) {
        bufferDelayLength = read(5) + 1;
        read(32);
        read(5);
        read(5);
      }
    }
    const displayDelay = read(1);
    const points = read(5) + 1;
    for (let i = 0; i < points; i++) {
      read(12);
      if (read(5) > 7) read(1);
      if (decoderModel && read(1)) {
        read(bufferDelayLength);
        read(bufferDelayLength);
        read(1);
      }
      if (displayDelay && read(1)) read(4);
    }
  }
  const widthBits = read(4) + 1;
  const heightBits = read(4) + 1;
  return { width: read(widthBits) + 1, height: read(heightBits) + 1 };
}

/** The largest frame any sequence header among `obus` allows; undefined when there is none. */
function obuFrames(obus: Uint8Array): FrameSize | undefined {
  let largest: FrameSize | undefined;
  for (let at = 0; at < obus.length; ) {
    const header = obus[at]!;
    const type = (header >> 3) & 15;
    let body = at + 1 + ((header >> 2) & 1);
    let size = obus.length - body;
    if (header & 2) {
      size = 0;
      for (let i = 0; ; i++) {
        if (body >= obus.length || i >= 8) return largest;
        const byte = obus[body++]!;
        size += (byte & 0x7f) * 2 ** (7 * i);
        if (!(byte & 0x80)) break;
      }
    }
    if (type === 1) {
      try {
        const frame = sequenceHeaderFrame(obus.subarray(body, Math.min(obus.length, body + size)));
        if (!largest || frame.width * frame.height > largest.width * largest.height) largest = frame;
      } catch {
        return largest;
      }
    }
    // A sequence header comes before the first frame: no need to read past a frame's start.
    if (type === 3 || type === 6) return largest;
    at = body + size;
  }
  return largest;
}

/** `grid` item data: its output canvas (ISO/IEC 23008-12 §6.6.2.3.2). */
function gridCanvas(data: Uint8Array): FrameSize | undefined {
  if (data.length < 8) return undefined;
  const wide = (data[1]! & 1) === 1;
  return wide
    ? data.length >= 12
      ? { width: u32(data, 4), height: u32(data, 8) }
      : undefined
    : { width: u16(data, 4), height: u16(data, 6) };
}

/**
 * The largest frame or canvas an AVIF's items decode to (each AV1 item's sequence header, each
 * grid's canvas), or undefined when they cannot all be read (refuse: decoding would be blind).
 */
export async function avifLargestFrame(read: ReadAt): Promise<FrameSize | undefined> {
  let head = await read(0, HEAD_BYTES);
  // The top-level boxes up to `meta` (it follows `ftyp` in an AVIF); it may run past the first read.
  let meta: Box | undefined;
  for (let at = 0; at + 8 <= head.length && !meta; ) {
    const size = u32(head, at);
    if (size < 8) return undefined;
    if (ascii(head, at + 4, 4) === "meta") meta = { type: "meta", body: at + 8, end: at + size };
    at += size;
  }
  if (!meta) return undefined;
  if (meta.end > head.length) {
    if (meta.end > MAX_META_BYTES) return undefined;
    head = await read(0, meta.end);
    if (head.length < meta.end) return undefined;
  }
  const iinf = child(head, meta, "iinf", true);
  const iloc = child(head, meta, "iloc", true);
  if (!iinf || !iloc) return undefined;
  const types = itemTypes(head, iinf);
  if (!types) return undefined;
  const locations = itemLocations(head, iloc, child(head, meta, "idat", true));
  const iprp = child(head, meta, "iprp", true);
  const configs = iprp ? configObus(head, iprp) : new Map<number, Uint8Array[]>();

  const itemHead = async (id: number): Promise<Uint8Array | undefined> => {
    const extents = locations.get(id);
    if (!extents || extents.length === 0) return undefined;
    const parts: Uint8Array[] = [];
    let wanted = ITEM_HEAD_BYTES;
    for (const { offset, length } of extents) {
      if (wanted <= 0) break;
      const n = Math.min(wanted, length || wanted);
      parts.push(offset < 0 ? head.subarray(-1 - offset, -1 - offset + n) : await read(offset, n));
      wanted -= n;
    }
    const joined = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
    let at = 0;
    for (const part of parts) joined.set(part, (at += part.length) - part.length);
    return joined;
  };

  let largest: FrameSize = { width: 0, height: 0 };
  const consider = (frame: FrameSize) => {
    if (frame.width * frame.height > largest.width * largest.height) largest = frame;
  };
  for (const [id, type] of types) {
    if (type !== "av01" && type !== "grid") continue;
    const data = await itemHead(id);
    if (!data) return undefined;
    const frames = type === "grid" ? [gridCanvas(data)] : [obuFrames(data), ...(configs.get(id) ?? []).map(obuFrames)];
    // An AV1 item must carry its own sequence header; none found: unknown size, refused.
    if (frames[0] === undefined) return undefined;
    for (const frame of frames) if (frame) consider(frame);
  }
  return largest.width > 0 ? largest : undefined;
}
