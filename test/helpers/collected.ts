/**
 * Waits for server processes' own collector passes to leave nothing behind: `left()` is counted
 * again each time one of them logs `blobs collected` (a pass that removed something:
 * src/runtime/host/collector-schedule.ts), not on a timer. Resolves with what is left, 0 or, after
 * `withinMs` without reaching 0, the last count: the caller asserts it.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { ServerProcess } from "./spawn-server.js";

const collected = (line: Record<string, unknown>) => line.msg === "blobs collected";

export async function leftAfterCollection(
  servers: ServerProcess[],
  left: () => Promise<number>,
  withinMs: number,
): Promise<number> {
  const stop = new AbortController();
  let expired = false;
  const deadline = delay(withinMs, undefined, { signal: stop.signal }).then(
    () => void (expired = true),
    () => {}, // stopped: reached 0 first
  );
  try {
    for (;;) {
      // Lines from before the count on: a pass that ends while counting is not missed.
      const from = servers.map((s) => s.stdout.length);
      const count = await left();
      if (count === 0 || expired) return count;
      const passes = servers.map((s, i) => s.waitForLine(collected, from[i]));
      for (const pass of passes) pass.catch(() => {}); // a server stopped later: nothing to wait for then
      await Promise.race([...passes, deadline]);
    }
  } finally {
    stop.abort();
  }
}
