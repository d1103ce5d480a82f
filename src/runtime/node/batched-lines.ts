/**
 * Log lines written in batches: one write per event-loop turn (or per 64 KiB) instead of one per
 * line. stdout is synchronous on Linux for files and pipes, so a write per access-log line was a
 * system call per request on the hottest path. Call `flush` before the process exits.
 *
 * A write holds whole lines and at most `maxBatchChars` (unless one line alone is longer): worker
 * processes sharing one stdout pipe pass PIPE_BUF (4096), the most a pipe writes without
 * interleaving another writer's bytes.
 */
export function batchedLines(write: (chunk: string) => void, maxBatchChars = 64 * 1024) {
  let pending: string[] = [];
  let chars = 0;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join("");
    pending = [];
    chars = 0;
    write(chunk);
  };

  const line = (text: string) => {
    // Lengths in UTF-16 units: a line of non-ASCII text is longer in bytes, so keep a margin.
    if (chars > 0 && chars + text.length + 1 > maxBatchChars) flush();
    pending.push(`${text}\n`);
    chars += text.length + 1;
    if (chars >= maxBatchChars) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  return { line, flush };
}
