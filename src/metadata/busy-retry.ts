/**
 * Waiting out SQLITE_BUSY: the attempt runs again after a short sleep on a timer (2 ms, doubling to
 * 50 ms, with jitter so rivals do not retry in step) until it succeeds, fails otherwise, or `maxWaitMs`
 * has passed, then DatabaseBusyError (503 DATABASE_BUSY + Retry-After). Only for attempts that change
 * nothing when they fail with SQLITE_BUSY: a write that could not take the lock, a whole batch.
 * Used by the local file's client and the queued writes to a remote database. Web APIs only.
 */
import { DatabaseBusyError } from "./database-errors.js";

const FIRST_RETRY_MS = 2;
const MAX_RETRY_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function retryWhileBusy<T>(
  attempt: () => T | Promise<T>,
  isBusy: (err: unknown) => boolean,
  maxWaitMs: number,
  deadline = Date.now() + maxWaitMs,
): Promise<T> {
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    try {
      return await attempt();
    } catch (err) {
      if (!isBusy(err)) throw err;
      const left = deadline - Date.now();
      if (left <= 0) throw new DatabaseBusyError(maxWaitMs, { cause: err });
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
    }
  }
}
