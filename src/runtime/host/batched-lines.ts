/**
 * Log lines written in batches: one write per event-loop turn (or per 64 KiB) instead of one per
 * line. stdout is synchronous on Linux for files and pipes, so a write per access-log line was a
 * system call per request on the hottest path. Call `flush` before the process exits.
 *
 * Each line is encoded into one reused buffer as it comes: a turn's lines kept as strings until the
 * flush survived young-generation collections, which made V8 double its young generation (8 → 16
 * MiB semi-spaces) and the service's RSS under load ≈ 15 MiB larger than without the access log;
 * encoded as they come, RSS after 4 s of small-file load read 103–106 MiB instead of 122–124 (Node 20).
 * Every write gets its own copy, so a writer may keep it.
 *
 * A write holds whole lines and at most `maxBatchBytes` (unless one line alone is longer): worker
 * processes sharing one stdout pipe pass PIPE_BUF (4096), the most a pipe writes without
 * interleaving another writer's bytes.
 *
 * How a line gets into the batch depends on the engine (`copyAscii`):
 * - On Bun (JavaScriptCore) the logger hands its pieces over one by one (`begin`), and a JS loop
 *   copies ASCII: 2.4–3.1 µs per access-log line in the server, against 3.3–4.4 with a
 *   `Buffer#write` per piece (bench/NOTES.md, Bun small files).
 * - On Node (V8) the logger joins the line into one string (V8 keeps it as a tree: nothing copied)
 *   and `line` writes it with one `Buffer#write`. The loop has a flaw there: its per-character
 *   `charCodeAt` lookups go megamorphic for the rest of the process once strings of other
 *   representations have passed through (the app's requests log such strings), and a native call
 *   per piece costs ≈ 500 instructions of overhead, ≈ 20 per line. callgrind (bench/NOTES.md, tenth
 *   pass): a 64 KiB range after 3 000 GETs the app answered, 249 000 → 210 000 instructions per
 *   request; a 4 KiB GET of a fresh process, 141 000 → 130 500.
 */
export function batchedLines(
  write: (chunk: Uint8Array) => void,
  maxBatchBytes = 64 * 1024,
  { copyAscii = false }: { copyAscii?: boolean } = {},
) {
  const batch = Buffer.allocUnsafeSlow(maxBatchBytes);
  let used = 0;
  let scheduled = false;
  /** Callers of `idle` waiting for the scheduled write. */
  let waiters: (() => void)[] = [];

  const flush = () => {
    scheduled = false;
    if (used > 0) {
      const chunk = Buffer.from(batch.subarray(0, used));
      used = 0;
      write(chunk);
    }
    if (waiters.length > 0) {
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    }
  };

  /** Resolves once every line given so far has been written: the idle signal tests await. */
  const idle = (): Promise<void> =>
    scheduled ? new Promise<void>((resolve) => waiters.push(resolve)) : Promise.resolve();

  /** After a line: write when the batch is full, else once this turn is over. */
  const ended = () => {
    if (used >= maxBatchBytes) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  const line = (text: string) => {
    // A UTF-16 unit is at most 3 UTF-8 bytes: a line that surely fits needs no byteLength pass.
    if (used + text.length * 3 + 1 > maxBatchBytes) {
      const bytes = Buffer.byteLength(text) + 1;
      if (used > 0 && used + bytes > maxBatchBytes) flush();
      if (bytes > maxBatchBytes) return write(Buffer.from(`${text}\n`));
    }
    used += batch.write(text, used);
    batch[used++] = 0x0a;
    ended();
  };

  /**
   * Copies `text` into the batch when every character is ASCII that JSON writes as it is (`json`:
   * any ASCII, the text being JSON already), the common case: no string built or encoded. Otherwise
   * false, and `used` stays where it was.
   */
  const copied = (text: string, json: boolean): boolean => {
    let at = used;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80 || (!json && (c < 0x20 || c === 0x22 || c === 0x5c))) return false;
      batch[at++] = c;
    }
    used = at;
    return true;
  };

  /** A line written piece by piece into the batch: `raw` JSON text, `string` values, `end`. */
  const writer = {
    raw(json: string) {
      if (!copied(json, true)) used += batch.write(json, used);
    },
    string(value: string) {
      batch[used++] = 0x22;
      if (copied(value, false)) batch[used++] = 0x22;
      // JSON.stringify's text brings its own quotes: written over the one just put.
      else used += batch.write(JSON.stringify(value), used - 1) - 1;
    },
    end() {
      batch[used++] = 0x0a;
      ended();
    },
  };

  /** The writer for a line of at most `maxBytes` bytes (room made first), or null when it would not fit in one batch. */
  const begin = (maxBytes: number) => {
    if (maxBytes + 1 > maxBatchBytes) return null;
    if (used + maxBytes + 1 > maxBatchBytes) flush();
    return writer;
  };

  return { line, begin: copyAscii ? begin : undefined, flush, idle };
}
