/**
 * Bounds the transforms running at once: `slots` run, up to `queue` more wait their turn, and any
 * beyond that are refused at once with 503 + Retry-After rather than piling up memory and latency.
 */
import { ProblemError } from "../problems.js";

export interface WorkLimit {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createWorkLimit(slots: number, queue: number): WorkLimit {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(work) {
      if (running < slots) running++;
      else if (waiting.length < queue) await new Promise<void>((resolve) => waiting.push(resolve));
      else {
        throw new ProblemError("UNAVAILABLE", `${slots} image transforms are running and ${queue} waiting; try again`, {
          headers: { "retry-after": "1" },
        });
      }
      try {
        return await work();
      } finally {
        // The slot passes straight to the next waiter, so `running` never dips while some wait.
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}
