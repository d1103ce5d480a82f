/**
 * Runs a background pass in a Node/Bun process every `everyMs` (and at once when `atStart`), off
 * the request path. Passes never overlap: a tick while one runs is skipped. `stop` waits for the
 * running pass, so what it uses (the database) can close after it. A failed pass is `onError`'s.
 * `idle` is for whoever must know the background is quiet (a test counting I/O): it resolves once
 * the start-up pass has run and no pass is running.
 */
export interface PassSchedule {
  stop(): Promise<void>;
  idle(): Promise<void>;
}

export function schedulePasses(
  pass: () => Promise<void>,
  everyMs: number,
  onError: (err: unknown) => void,
  { atStart = false }: { atStart?: boolean } = {},
): PassSchedule {
  let running: Promise<void> | null = null;
  let stopped = false;
  let begin = () => {};
  // The start-up pass has begun (or will never: not asked for, or stopped first).
  const begun = atStart ? new Promise<void>((resolve) => (begin = resolve)) : Promise.resolve();
  const tick = () => {
    begin();
    if (running || stopped) return;
    running = pass()
      .catch(onError)
      .finally(() => {
        running = null;
      });
  };
  const first = atStart ? setTimeout(tick, 0) : undefined;
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      begin();
      clearTimeout(first);
      clearInterval(timer);
      await running;
    },
    async idle() {
      await begun;
      while (running) await running;
    },
  };
}
