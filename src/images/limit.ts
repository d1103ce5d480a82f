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

/** Who a transform is for: its tenant, and its caller (a user, a signed link, anyone). */
export interface Asker {
  tenant?: string;
  caller?: string;
}

export interface WorkLimit {
  /** Runs `work` in a slot, kept until `work` and whatever it passed to `hold` have settled. */
  run<T>(work: (hold: (busy: Promise<unknown>) => void) => Promise<T>, asker?: Asker): Promise<T>;
}

interface Waiter {
  tenant: string;
  caller: string;
  seq: number;
  go(): void;
}

/**
 * Fair shares (issue 41: five requests from one signed link filled the slot and the queue, and a
 * user's 32 px thumbnail got 503 for 7 s). A caller may have `queue` waiting, a tenant twice that,
 * all together four times that; a freed slot goes to the waiter whose tenant, then caller, has the
 * fewest running and was served longest ago (oldest first among equals), so no caller or tenant
 * holds more than its share while others wait. With no asker every request is one caller: a plain
 * FIFO of `queue`, as before.
 */
export function createWorkLimit(slots: number, queue: number, maxWaitMs = Number.POSITIVE_INFINITY): WorkLimit {
  let running = 0;
  let seq = 0;
  const waiting: Waiter[] = [];
  const runningBy = new Map<string, number>();
  const waitingBy = new Map<string, number>();
  const servedAt = new Map<string, number>();
  const add = (counts: Map<string, number>, key: string, by: number) => {
    const n = (counts.get(key) ?? 0) + by;
    if (n === 0) counts.delete(key);
    else counts.set(key, n);
  };
  const before = (a: number[], b: number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
    return false;
  };
  const busy = (detail: string, retrySeconds: number) =>
    new ImageError("IMAGE_BUSY", detail, { retryAfterSeconds: retrySeconds });

  /** The waiter next in fairness: least running and least recently served, tenant then caller. */
  const next = (): Waiter | undefined => {
    let best: Waiter | undefined;
    let bestRank: number[] = [];
    for (const w of waiting) {
      const rank = [
        runningBy.get(`t:${w.tenant}`) ?? 0,
        servedAt.get(`t:${w.tenant}`) ?? -1,
        runningBy.get(`c:${w.caller}`) ?? 0,
        servedAt.get(`c:${w.caller}`) ?? -1,
        w.seq,
      ];
      if (!best || before(rank, bestRank)) {
        best = w;
        bestRank = rank;
      }
    }
    return best;
  };

  const leaveQueue = (w: Waiter) => {
    waiting.splice(waiting.indexOf(w), 1);
    add(waitingBy, `t:${w.tenant}`, -1);
    add(waitingBy, `c:${w.caller}`, -1);
  };

  const start = (tenant: string, caller: string) => {
    add(runningBy, `t:${tenant}`, 1);
    add(runningBy, `c:${caller}`, 1);
    servedAt.set(`t:${tenant}`, seq);
    servedAt.set(`c:${caller}`, seq++);
    if (servedAt.size > 4 * (slots + 4 * queue) + 1024) servedAt.clear(); // only an order: bounded memory
  };

  /** Resolves when a slot passes to this waiter; rejects (leaving the queue) once `maxWaitMs` is over. */
  const turn = (tenant: string, caller: string) =>
    new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        tenant,
        caller,
        seq: seq++,
        go() {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = Number.isFinite(maxWaitMs)
        ? setTimeout(() => {
            leaveQueue(waiter);
            const seconds = Math.ceil(maxWaitMs / 1000);
            reject(busy(`no image transform slot came free within the ${seconds} s time limit; try again`, seconds));
          }, maxWaitMs)
        : undefined;
      waiting.push(waiter);
      add(waitingBy, `t:${tenant}`, 1);
      add(waitingBy, `c:${caller}`, 1);
    });

  const full = (tenant: string, caller: string) =>
    waiting.length >= 4 * queue ||
    (waitingBy.get(`t:${tenant}`) ?? 0) >= 2 * queue ||
    (waitingBy.get(`c:${caller}`) ?? 0) >= queue;

  return {
    async run(work, { tenant = "", caller = "" } = {}) {
      if (running < slots) running++;
      else if (!full(tenant, caller)) await turn(tenant, caller);
      else throw busy(`${slots} image transforms are running and ${queue} waiting; try again`, 1);
      start(tenant, caller);
      const held: Promise<unknown>[] = [];
      // The slot passes straight to the next waiter, so `running` never dips while some wait.
      const release = () => {
        add(runningBy, `t:${tenant}`, -1);
        add(runningBy, `c:${caller}`, -1);
        const chosen = next();
        if (!chosen) return void running--;
        leaveQueue(chosen);
        chosen.go();
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
