/**
 * Exact-length reads over a Web byte stream: the zip parser asks for "the next 46 bytes" while the
 * blob store hands out chunks of whatever size, so this buffers at most one chunk.
 */

export class StreamByteReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #truncated: () => Error;
  #pending: Uint8Array = new Uint8Array(0);
  #sourceError: { error: unknown } | undefined;

  /** `truncated` builds the error thrown when the stream ends before the bytes asked for. */
  constructor(stream: ReadableStream<Uint8Array>, truncated: () => Error) {
    this.#reader = stream.getReader();
    this.#truncated = truncated;
  }

  /** True if `err` is the source stream's own failure (an I/O error, not bad zip data). */
  isSourceError(err: unknown): boolean {
    return this.#sourceError !== undefined && this.#sourceError.error === err;
  }

  /** The next non-empty piece of input, or throws `truncated` at end of stream. */
  async #fill(): Promise<void> {
    while (this.#pending.length === 0) {
      let result: ReadableStreamReadResult<Uint8Array>;
      try {
        result = await this.#reader.read();
      } catch (error) {
        this.#sourceError = { error };
        throw error;
      }
      if (result.done) throw this.#truncated();
      this.#pending = result.value;
    }
  }

  /** Exactly `length` bytes (copied, so callers may keep them). */
  async exact(length: number): Promise<Uint8Array> {
    const out = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      await this.#fill();
      const n = Math.min(length - filled, this.#pending.length);
      out.set(this.#pending.subarray(0, n), filled);
      this.#pending = this.#pending.subarray(n);
      filled += n;
    }
    return out;
  }

  async skip(length: number): Promise<void> {
    let left = length;
    while (left > 0) {
      await this.#fill();
      const n = Math.min(left, this.#pending.length);
      this.#pending = this.#pending.subarray(n);
      left -= n;
    }
  }

  /**
   * The next `length` bytes as a stream of slices no larger than `maxSlice`, pulled on demand.
   * Small slices bound how much a decompressor downstream can produce per write. Once the bytes are
   * delivered the source is cancelled, so anything after them (a data descriptor) is never read.
   */
  take(length: number, maxSlice: number): ReadableStream<Uint8Array<ArrayBuffer>> {
    let left = length;
    return new ReadableStream<Uint8Array<ArrayBuffer>>(
      {
        pull: async (controller) => {
          if (left === 0) {
            controller.close();
            await this.cancel();
            return;
          }
          await this.#fill();
          const n = Math.min(left, maxSlice, this.#pending.length);
          controller.enqueue(this.#pending.slice(0, n));
          this.#pending = this.#pending.subarray(n);
          left -= n;
        },
        cancel: (reason) => this.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  /** Releases the source; never throws (the source may already have failed). */
  async cancel(reason?: unknown): Promise<void> {
    this.#pending = new Uint8Array(0);
    await this.#reader.cancel(reason).catch(() => undefined);
  }
}
