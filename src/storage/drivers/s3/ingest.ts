/**
 * Reading a put body into upload parts: counting, hashing (incremental SHA-256) and enforcing the
 * byte limit as chunks arrive, so nothing beyond one part plus one chunk is ever buffered.
 */
import { Sha256 } from "../../../lib/sha256.js";
import type { BlobInfo, StorageError } from "../../blob-store.js";
import { checkChunk, checkHash } from "../utils/put-checks.js";
import { DRIVER } from "./errors.js";

const noop = () => {};
const INITIAL_PART_BYTES = 64 * 1024;

/** A part being filled: grows on demand (most bodies are small) up to `capacity`, copying chunks in. */
export class PartBuffer {
  readonly capacity: number;
  #bytes: Uint8Array<ArrayBuffer>;
  #length = 0;

  /** `preallocate` skips the growth steps when the part is known to fill (every part after the first). */
  constructor(capacity: number, preallocate = false) {
    this.capacity = capacity;
    this.#bytes = new Uint8Array(preallocate ? capacity : Math.min(capacity, INITIAL_PART_BYTES));
  }

  get length(): number {
    return this.#length;
  }

  get full(): boolean {
    return this.#length === this.capacity;
  }

  /** Copies as much of `chunk` as fits; returns how many bytes were taken. */
  append(chunk: Uint8Array): number {
    const n = Math.min(chunk.byteLength, this.capacity - this.#length);
    const needed = this.#length + n;
    if (needed > this.#bytes.byteLength) {
      const grown = new Uint8Array(Math.min(this.capacity, Math.max(needed, this.#bytes.byteLength * 2)));
      grown.set(this.#bytes.subarray(0, this.#length));
      this.#bytes = grown;
    }
    this.#bytes.set(n === chunk.byteLength ? chunk : chunk.subarray(0, n), this.#length);
    this.#length = needed;
    return n;
  }

  bytes(): Uint8Array<ArrayBuffer> {
    return this.#bytes.subarray(0, this.#length);
  }
}

/**
 * A put body read chunk by chunk (each read awaited, so the producer is paced by the upload).
 * An error from the body itself propagates unchanged; `cancel` stops the producer after our own
 * failures (limit, hash, S3 errors) but never touches a body that already ended.
 */
export class MeteredBody {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #hash = new Sha256();
  readonly #limit: number;
  readonly #tooLarge: () => StorageError;
  /** The unused tail of the last chunk read (copied: the producer may reuse its buffer). */
  #carry: Uint8Array | undefined;
  #eof = false;
  /** Done or errored: nothing left to cancel. */
  #settled = false;

  constructor(body: ReadableStream<Uint8Array>, limit: number, tooLarge: () => StorageError) {
    this.#reader = body.getReader();
    this.#limit = limit;
    this.#tooLarge = tooLarge;
  }

  /** Moves bytes into `part` until it is full or the body ends. */
  async fill(part: PartBuffer): Promise<void> {
    while (!part.full) {
      const chunk = this.#carry ?? (await this.#next());
      this.#carry = undefined;
      if (chunk === undefined) return;
      const used = part.append(chunk);
      if (used < chunk.byteLength) this.#carry = chunk.slice(used);
    }
  }

  /** True once the body has ended; may read one chunk ahead to find out. */
  async atEnd(): Promise<boolean> {
    if (this.#carry) return false;
    const chunk = await this.#next();
    if (chunk === undefined) return true;
    this.#carry = chunk.slice();
    return false;
  }

  /** Size and SHA-256 of the whole body, once it has ended; HASH_MISMATCH unless it is `expectedSha256`. */
  finish(expectedSha256?: string): BlobInfo {
    if (!this.#eof) throw new Error("MeteredBody.finish() before the body ended");
    const info = { size: this.#hash.length, sha256: this.#hash.hex() };
    checkHash(DRIVER, info.sha256, expectedSha256);
    return info;
  }

  /** Stops the producer (e.g. an origin download) instead of leaving it to fill buffers. */
  cancel(reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reader.cancel(reason).catch(noop);
  }

  async #next(): Promise<Uint8Array | undefined> {
    if (this.#eof) return undefined;
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await this.#reader.read();
    } catch (err) {
      this.#settled = true; // errored: the caller gets the body's own error back, unwrapped
      throw err;
    }
    if (read.done) {
      this.#eof = this.#settled = true;
      return undefined;
    }
    const chunk = read.value;
    checkChunk(chunk);
    if (this.#hash.length + chunk.byteLength > this.#limit) throw this.#tooLarge();
    this.#hash.update(chunk);
    return chunk;
  }
}
