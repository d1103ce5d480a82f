/**
 * The part SHA-256 and SHA-512 (FIPS 180-4) share: input cut into blocks (kept: at most one block
 * of pending input; callers may reuse their chunks), then the padding of §5.1 — a 1 bit, zeros, and
 * the bit length big-endian in the block's last `lengthBytes` bytes. Subclasses compress blocks and
 * write out their state.
 */
import { toHex } from "./hex.js";

export abstract class BlockHash {
  readonly #block: Uint8Array<ArrayBuffer>;
  readonly #blockBytes: number;
  readonly #lengthBytes: number;
  #blockLength = 0;
  /** Total input length; a double is exact far beyond any stream we will hash (2^53 bytes). */
  #length = 0;
  #digest: Uint8Array | undefined;

  protected constructor(blockBytes: number, lengthBytes: number) {
    this.#blockBytes = blockBytes;
    this.#lengthBytes = lengthBytes;
    this.#block = new Uint8Array(blockBytes);
  }

  /** Processes the block of `data` at `offset` into the state. */
  protected abstract compress(data: Uint8Array, offset: number): void;
  /** The digest of the final state. */
  protected abstract output(): Uint8Array;

  /** Total bytes hashed so far. */
  get length(): number {
    return this.#length;
  }

  update(data: Uint8Array): this {
    if (this.#digest) throw new Error(`${this.constructor.name}: update() after digest()`);
    const size = this.#blockBytes;
    this.#length += data.byteLength;
    let offset = 0;
    if (this.#blockLength > 0) {
      const take = Math.min(size - this.#blockLength, data.byteLength);
      this.#block.set(data.subarray(0, take), this.#blockLength);
      this.#blockLength += take;
      offset = take;
      if (this.#blockLength < size) return this;
      this.compress(this.#block, 0);
      this.#blockLength = 0;
    }
    // Whole blocks straight from the caller's bytes: no copy.
    for (; data.byteLength - offset >= size; offset += size) this.compress(data, offset);
    if (offset < data.byteLength) {
      this.#block.set(data.subarray(offset));
      this.#blockLength = data.byteLength - offset;
    }
    return this;
  }

  /** The digest. Finalizes the hash: later `update` calls throw, `digest` returns the same value. */
  digest(): Uint8Array {
    if (this.#digest) return this.#digest.slice();
    const block = this.#block;
    const lengthAt = this.#blockBytes - this.#lengthBytes;
    block[this.#blockLength++] = 0x80;
    if (this.#blockLength > lengthAt) {
      block.fill(0, this.#blockLength);
      this.compress(block, 0);
      this.#blockLength = 0;
    }
    block.fill(0, this.#blockLength);
    // The bit length: inputs stay below 2^53 bytes, so only the last 8 bytes are ever non-zero.
    const view = new DataView(block.buffer);
    view.setUint32(this.#blockBytes - 8, Math.floor(this.#length / 0x20000000)); // high bits of length * 8
    view.setUint32(this.#blockBytes - 4, (this.#length * 8) >>> 0);
    this.compress(block, 0);
    this.#digest = this.output();
    return this.#digest.slice();
  }

  /** The digest as lowercase hex. */
  hex(): string {
    return toHex(this.digest());
  }
}
