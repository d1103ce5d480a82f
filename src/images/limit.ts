/**
 * Bounds the transforms running at once: `slots` run, up to `queue` more wait their turn, and any
 * beyond that are refused at once with 503 + Retry-After rather than piling up memory and latency.
 * Waiting counts against the time limit (`maxWaitMs`, CMS_IMAGE_TIMEOUT_SECONDS): a request still
 * waiting when it passes is refused the same way, not run late (one in a burst took 51 s of a 30 s limit).
 * Work may answer before the machine is done with it (a 503 past the time limit while libvips is
 * still encoding): it `hold`s that, and its slot passes on only once that settles too, so CPU use
 * never exceeds the slots.
 */
import { ImageError } from "./errors.js";

export interface WorkLimit {
  /** Runs `work` in a slot, kept until `work` and whatever it passed to `hold` have settled. */
  run<T>(work: (hold: (busy: Promise<unknown>) => void) => Promise<T>): Promise<T>;
}

export function createWorkLimit(slots: number, queue: number, maxWaitMs = Number.POSITIVE_INFINITY): WorkLimit {
  let running = 0;
  const waiting: (() => void)[] = [];
  const busy = (detail: string, retrySeconds: number) =>
    new ImageError("IMAGE_BUSY", detail, { retryAfterSeconds: retrySeconds });

  /** Resolves when a slot passes to this waiter; rejects (leaving the queue) once `maxWaitMs` is over. */
  const turn = () =>
    new Promise<void>((resolve, reject) => {
      const next = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = Number.isFinite(maxWaitMs)
        ? setTimeout(() => {
            waiting.splice(waiting.indexOf(next), 1);
            const seconds = Math.ceil(maxWaitMs / 1000);
            reject(busy(`no image transform slot came free within the ${seconds} s time limit; try again`, seconds));
          }, maxWaitMs)
        : undefined;
      waiting.push(next);
    });

  return {
    async run(work) {
      if (running < slots) running++;
      else if (waiting.length < queue) await turn();
      else throw busy(`${slots} image transforms are running and ${queue} waiting; try again`, 1);
      const held: Promise<unknown>[] = [];
      // The slot passes straight to the next waiter, so `running` never dips while some wait.
      const release = () => {
        const next = waiting.shift();
        if (next) next();
        else running--;
      };
      try {
        return await work((busy) => held.push(busy));
      } finally {
        if (held.length === 0) release();
        else void Promise.allSettled(held).then(release);
      }
    },
  };
}
