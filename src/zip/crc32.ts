/**
 * Incremental CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum zip stores per
 * entry (APPNOTE.TXT 4.4.7). Web Crypto has no CRC, so it is computed here, slicing-by-8.
 */

/** TABLES[k][n]: the CRC of byte n followed by k zero bytes (Intel's slicing-by-8 layout). */
const TABLES = (() => {
  const tables = Array.from({ length: 8 }, () => new Uint32Array(256));
  const [t0] = tables as [Uint32Array];
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t0[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) tables[k]![n] = (tables[k - 1]![n]! >>> 8) ^ t0[tables[k - 1]![n]! & 0xff]!;
  }
  return tables as [
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
    Uint32Array,
  ];
})();

/** Feed chunks in order with `update`; `value` is the CRC of everything so far. */
export class Crc32 {
  #crc = 0xffffffff;

  update(bytes: Uint8Array): this {
    const [t0, t1, t2, t3, t4, t5, t6, t7] = TABLES;
    let crc = this.#crc;
    let i = 0;
    for (const end8 = bytes.length - 8; i <= end8; i += 8) {
      crc ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
      crc =
        t7[crc & 0xff]! ^
        t6[(crc >>> 8) & 0xff]! ^
        t5[(crc >>> 16) & 0xff]! ^
        t4[crc >>> 24]! ^
        t3[bytes[i + 4]!]! ^
        t2[bytes[i + 5]!]! ^
        t1[bytes[i + 6]!]! ^
        t0[bytes[i + 7]!]!;
    }
    for (; i < bytes.length; i++) crc = t0[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
    this.#crc = crc;
    return this;
  }

  get value(): number {
    return (this.#crc ^ 0xffffffff) >>> 0;
  }
}

export const crc32 = (bytes: Uint8Array): number => new Crc32().update(bytes).value;
