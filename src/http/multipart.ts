// Kept over @mjackson/multipart-parser 0.10.1: it buffers each whole part in memory (docs/library-decisions.md).
/**
 * Streaming multipart/form-data parser (RFC 7578 over RFC 2046 §5.1) on Web streams only, so it
 * runs on Node, Bun and Workers: every part body is a stream pulled from the source on demand.
 */
import { ProblemError } from "../problems.js";
import { parseBoundary, parsePartHeaders } from "./multipart-headers.js";
import { horspool, Window } from "./multipart-window.js";

/**
 * Every limit fails with 413 PAYLOAD_TOO_LARGE (malformed input is 400 VALIDATION_FAILED). There is
 * deliberately no file-size limit: the caller streams a file into storage, which enforces its own.
 */
export interface MultipartLimits {
  /** Most parts (fields and files together); reaching part `maxParts + 1` fails. Default 20. */
  maxParts?: number;
  /** Largest header block of one part, in bytes. Default 16 KiB. */
  maxHeaderBytes?: number;
  /** Most header lines in one part. Default 16. */
  maxHeaderLines?: number;
  /** Longest field name, in UTF-8 bytes. Default 1 KiB. */
  maxFieldNameBytes?: number;
  /** Largest non-file field; enforced by `readText` (the parser never buffers a body). Default 64 KiB. */
  maxFieldBytes?: number;
}

export const MULTIPART_DEFAULTS: Readonly<Required<MultipartLimits>> = Object.freeze({
  maxParts: 20,
  maxHeaderBytes: 16 * 1024,
  maxHeaderLines: 16,
  maxFieldNameBytes: 1024,
  maxFieldBytes: 64 * 1024,
});

export interface MultipartPart {
  /** The `name` parameter, UTF-8 decoded, `%22`/`%0D`/`%0A` unescaped as the WHATWG encoder escapes them. */
  name: string;
  /** `filename*` (RFC 8187) or `filename`; null for a plain field, "" for an empty file input. Untrusted. */
  filename: string | null;
  /** The part's Content-Type as sent, or null (RFC 7578 §4.4 then implies text/plain). */
  contentType: string | null;
  headers: Headers;
  /** Errors with 400 "truncated multipart body" if the request ends before the close delimiter. */
  body: ReadableStream<Uint8Array>;
}

const CR = 13;
const LF = 10;
const DASH = 45;
// Most epilogue (RFC 2046: ignored) read to let the request body end cleanly before cancelling it.
const MAX_EPILOGUE = 64 * 1024;

const truncated = () => new ProblemError("VALIDATION_FAILED", "truncated multipart body");

/**
 * Iterates the parts of a multipart/form-data body. Content-Type problems throw here, before the
 * body is touched (415 for another media type, 400 for a missing/invalid boundary).
 *
 * Contract: parts share one source, so read (or cancel) each part's `body` before asking for the
 * next part. Asking early skips the unread rest, and the abandoned body stream then errors. Breaking
 * out of the loop (`return()`) cancels the source; an exhausted iterator has consumed the body.
 */
export function parseMultipart(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  limits: MultipartLimits = {},
): AsyncIterableIterator<MultipartPart> {
  const boundary = parseBoundary(contentType);
  const resolved = { ...MULTIPART_DEFAULTS };
  for (const key of Object.keys(resolved) as (keyof MultipartLimits)[]) resolved[key] = limits[key] ?? resolved[key];
  return new MultipartIterator(body.getReader(), boundary, resolved);
}

/** Reads a small field as UTF-8: 413 past `maxBytes` (the rest of the part is then skipped), 400 if not UTF-8. */
export async function readText(
  part: MultipartPart,
  maxBytes: number = MULTIPART_DEFAULTS.maxFieldBytes,
): Promise<string> {
  const reader = part.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const pointer = `/body/${part.name.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      size += r.value.length;
      if (size > maxBytes) {
        await reader.cancel();
        const detail = `field is larger than ${maxBytes} bytes`;
        throw new ProblemError("PAYLOAD_TOO_LARGE", `multipart ${detail}`, { errors: [{ pointer, detail }] });
      }
      chunks.push(r.value);
    }
  } finally {
    reader.releaseLock();
  }
  try {
    const text = new Uint8Array(size);
    chunks.reduce((at, chunk) => (text.set(chunk, at), at + chunk.length), 0);
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(text);
  } catch {
    throw new ProblemError("VALIDATION_FAILED", "multipart field is not valid UTF-8", {
      errors: [{ pointer, detail: "not valid UTF-8" }],
    });
  }
}

interface OpenPart {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** The stream no longer accepts chunks: closed, errored or cancelled. */
  settled: boolean;
}

class MultipartIterator implements AsyncIterableIterator<MultipartPart> {
  private readonly window = new Window();
  private readonly delimiter: Uint8Array;
  private readonly find: (hay: Uint8Array, from: number, to: number) => number;
  // "part": inside a body (the preamble counts: it is skipped like an unread part);
  // "delimiter": positioned at a delimiter; "done": finished, failed or cancelled.
  private state: "part" | "delimiter" | "done" = "part";
  private failure: unknown = null;
  private current: OpenPart | null = null;
  private parts = 0;
  private lock: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    boundary: string,
    private readonly limits: Required<MultipartLimits>,
  ) {
    // RFC 2046 §5.1.1: the delimiter is CRLF "--" boundary, and the CRLF belongs to it, not to the
    // preceding body. A virtual CRLF in front lets the first boundary sit at the very start.
    this.delimiter = new TextEncoder().encode(`\r\n--${boundary}`);
    this.window.append(new Uint8Array([CR, LF]));
    this.find = horspool(this.delimiter);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<MultipartPart, undefined>> {
    return this.exclusive(() => this.advance());
  }

  return(): Promise<IteratorResult<MultipartPart, undefined>> {
    return this.exclusive(async () => {
      if (this.state !== "done") this.fail(new Error("multipart iteration was closed"), false);
      return { done: true, value: undefined };
    });
  }

  /** Part bodies, next() and return() share the source: one at a time. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.lock.then(task);
    this.lock = run.catch(() => undefined);
    return run;
  }

  private async advance(): Promise<IteratorResult<MultipartPart, undefined>> {
    if (this.failure !== null) throw this.failure;
    if (this.state === "done") return { done: true, value: undefined };
    try {
      const skipped = this.current;
      if (skipped && !skipped.settled) {
        skipped.settled = true;
        skipped.controller.error(new Error("multipart part was skipped: the iterator moved past it"));
      }
      if (this.state === "part") while ((await this.nextBodyChunk()) !== null);
      if (await this.consumeDelimiter()) {
        await this.drainEpilogue();
        this.state = "done";
        return { done: true, value: undefined };
      }
      if (++this.parts > this.limits.maxParts) {
        throw new ProblemError("PAYLOAD_TOO_LARGE", `multipart body has more than ${this.limits.maxParts} parts`);
      }
      const head = parsePartHeaders(await this.readHeaderBlock(), this.limits);
      this.state = "part";
      return { done: false, value: { ...head, body: this.openBody() } };
    } catch (err) {
      this.fail(err, true);
      throw err;
    }
  }

  private openBody(): ReadableStream<Uint8Array> {
    let part: OpenPart | undefined;
    // highWaterMark 0: nothing is pulled from the source until the consumer reads.
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          part = this.current = { controller, settled: false };
        },
        pull: (controller) =>
          this.exclusive(async () => {
            if (!part || part.settled || this.current !== part) return;
            try {
              const chunk = await this.nextBodyChunk();
              if (part.settled) return; // cancelled meanwhile: the next advance() skips the rest
              if (chunk) return controller.enqueue(chunk);
              part.settled = true;
              controller.close();
            } catch (err) {
              this.fail(err, true);
            }
          }),
        cancel: () => {
          if (part) part.settled = true;
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Body bytes up to the next delimiter; null once positioned at it. Never holds more than one chunk. */
  private async nextBodyChunk(): Promise<Uint8Array | null> {
    const w = this.window;
    const keep = this.delimiter.length - 1;
    for (;;) {
      const at = this.find(w.buf, w.off, w.end);
      if (at === w.off) {
        this.state = "delimiter";
        return null;
      }
      if (at >= 0) return w.take(at - w.off);
      // No full match: only the last delimiter-length-minus-one bytes can start one.
      if (w.length > keep) return w.take(w.length - keep);
      await this.fill();
    }
  }

  /** After a delimiter: true for the close delimiter, else positioned at the CRLF ending the line. */
  private async consumeDelimiter(): Promise<boolean> {
    const w = this.window;
    await this.ensure(this.delimiter.length + 2);
    w.skip(this.delimiter.length);
    // Close delimiter: whatever follows (CRLF or nothing at all) is epilogue.
    if (w.byte(0) === DASH && w.byte(1) === DASH) return true;
    // RFC 2046 transport-padding (linear white space) may precede the CRLF; it counts as header bytes.
    let i = 0;
    while (w.byte(i) === 32 || w.byte(i) === 9) {
      if (++i > this.limits.maxHeaderBytes)
        throw new ProblemError("PAYLOAD_TOO_LARGE", "multipart delimiter padding too long");
      await this.ensure(i + 2);
    }
    if (w.byte(i) !== CR || w.byte(i + 1) !== LF)
      throw new ProblemError("VALIDATION_FAILED", "malformed multipart delimiter");
    w.skip(i);
    return false;
  }

  /** The part's header lines, consuming through the blank line. */
  private async readHeaderBlock(): Promise<Uint8Array> {
    const w = this.window;
    const max = this.limits.maxHeaderBytes;
    const tooLarge = () => new ProblemError("PAYLOAD_TOO_LARGE", `multipart part headers exceed ${max} bytes`);
    // Positioned at the delimiter line's CRLF, so the block ends at the first CRLF CRLF from here:
    // a terminator at offset r means a block of r - 2 bytes.
    for (let r = 0; ; await this.fill()) {
      for (; r + 4 <= w.length; r++) {
        const i = w.off + r;
        if (w.buf[i] === CR && w.buf[i + 1] === LF && w.buf[i + 2] === CR && w.buf[i + 3] === LF) {
          if (r - 2 > max) throw tooLarge();
          const block = w.buf.slice(w.off + 2, i);
          w.skip(r + 4);
          return block;
        }
      }
      if (r - 2 > max) throw tooLarge(); // every terminator still possible would end a longer block
    }
  }

  private async ensure(n: number): Promise<void> {
    while (this.window.length < n) await this.fill();
  }

  /** One more source chunk; the end of the source before the close delimiter is a truncated body. */
  private async fill(): Promise<void> {
    for (;;) {
      const { done, value } = await this.reader.read();
      if (done) throw truncated();
      if (value.length > 0) return this.window.append(value);
    }
  }

  /** RFC 2046 says ignore the epilogue; reading a little of it lets the request end cleanly. */
  private async drainEpilogue(): Promise<void> {
    try {
      for (let seen = this.window.length; seen <= MAX_EPILOGUE; ) {
        const { done, value } = await this.reader.read();
        if (done) return this.reader.releaseLock();
        seen += value.length;
      }
    } catch {
      // Every part has been delivered; a source failing after the close delimiter changes nothing.
    }
    await this.reader.cancel().catch(() => undefined);
  }

  /** Terminal: errors the open part body, cancels the source; `sticky` makes later next() rethrow. */
  private fail(err: unknown, sticky: boolean): void {
    if (this.state === "done") return;
    this.state = "done";
    if (sticky) this.failure = err;
    const part = this.current;
    if (part && !part.settled) {
      part.settled = true;
      part.controller.error(err);
    }
    this.reader.cancel(err).catch(() => undefined);
  }
}
