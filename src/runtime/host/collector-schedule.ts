/**
 * Runs the blob collector in a Node/Bun process: a storage sweep counting blobs the database has no
 * record of (never deleted: see blob-collector.ts) at start-up and daily,
 * and a collection pass every `intervalMs` (the Worker runs the same pass from its cron trigger).
 * Passes never overlap; `stop` waits for the running one (pass-schedule.ts).
 * `clock` is the app's (AppDeps["clock"]), the one the collector's grace period and tus expiry read.
 */
import type { Logger } from "../../lib/logger.js";
import type { BlobCollector } from "../../services/blob-collector.js";
import { type PassSchedule, schedulePasses } from "./pass-schedule.js";

const SWEEP_EVERY_MS = 24 * 60 * 60 * 1000;

export function scheduleCollector(
  collector: BlobCollector,
  intervalMs: number,
  logger: Logger,
  clock: () => Date,
): PassSchedule {
  let lastSweep = Number.NEGATIVE_INFINITY;

  const run = async () => {
    const now = clock().getTime();
    if (now - lastSweep >= SWEEP_EVERY_MS) {
      lastSweep = now;
      await collector.sweep(); // logs blobs this database has no record of; never deletes them
    }
    const figures = await collector.pass();
    if (
      figures.removed > 0 ||
      figures.takenOver > 0 ||
      figures.uploadsExpired > 0 ||
      figures.derivativesEvicted > 0 ||
      figures.stagedRemoved > 0
    )
      logger.info("blobs collected", { ...figures });
  };
  return schedulePasses(run, intervalMs, (err) => logger.warn("blob collection pass failed", { error: err }), {
    atStart: true,
  });
}
