/**
 * CMS_WORKERS > 1 on Node: one primary process and N workers serving one port through node:cluster.
 *
 * Why node:cluster and not SO_REUSEPORT: `listen({ reusePort })` exists only from Node 22.12/23.1,
 * and Node 20 is still supported (package.json engines). The cluster's primary accepts connections
 * and hands them to the workers in turn (round robin), on every Node version.
 *
 * The primary serves nothing. Before forking it checks the volume and migrates the database once
 * (a bad setting or database stops the server before any worker exists), and gives every worker the
 * same signed-link secret when none is configured (each process would otherwise pick its own, and a
 * link made by one worker would fail on the others). Workers share the database file and the volume
 * exactly as separate instances do (row cache: PRAGMA data_version; locks: rows in the database).
 * Only worker 1 runs the blob collector (collection is safe from several processes, but pointless).
 * A worker that dies after it started serving is logged and replaced in its slot; one that dies
 * before it ever listened is a start-up failure, which stops the whole server (exit code 1). SIGINT
 * or SIGTERM is passed to every worker, each stops gracefully, then the primary exits.
 */
import { randomBytes } from "node:crypto";
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { type Config, ConfigError } from "../../config.js";
import type { Logger } from "../../lib/logger.js";
import { createDatabaseHealth } from "../../metadata/database-health.js";
import { createMetadataStore } from "../../metadata/metadata-store.js";
import { claimBlobStore } from "../../services/store-owner.js";
import { openBlobStorage, storeLabelOf } from "./blob-storage.js";
import { openDatabase } from "./database.js";

/** Environment variable the primary gives each worker: its slot, 1…N (kept by a replacement). */
export const WORKER_SLOT_ENV = "CMS_WORKER_SLOT";
/** Longest the primary waits for its workers to stop before killing them (theirs is 5 s). */
const STOP_TIMEOUT_MS = 7000;

/** The number of processes to serve with; Bun (whose node:cluster is partial) refuses more than one. */
export function workerCount(setting: Config["CMS_WORKERS"], runtime: string): number {
  if (runtime === "bun" && setting !== 1) {
    throw new ConfigError([
      `CMS_WORKERS must be 1 on Bun (got "${setting}"): run several instances on one database instead`,
    ]);
  }
  return setting === "auto" ? availableParallelism() : setting;
}

/** This process's worker slot (1…N), or undefined when it is not a cluster worker. */
export function workerSlot(env: Record<string, string | undefined>): number | undefined {
  return cluster.isWorker ? Number(env[WORKER_SLOT_ENV]) : undefined;
}

export const isPrimaryOf = (count: number) => count > 1 && cluster.isPrimary;

/** Runs the primary: prepares storage and database once, forks `count` workers, replaces, stops. */
export async function runPrimary(config: Config, count: number, logger: Logger): Promise<void> {
  // Checked (and crashed uploads' leftovers swept, the store claimed) once, before any worker
  // starts, so a refusal is one line from the primary; the primary keeps no store.
  const storage = await openBlobStorage(config);
  try {
    const database = await openDatabase(config, createDatabaseHealth(logger));
    try {
      await claimBlobStore({
        blobs: storage.blobs,
        store: createMetadataStore(database.db),
        label: storeLabelOf(config),
        takeover: config.CMS_STORE_TAKEOVER,
        logger,
      });
    } finally {
      database.close();
    }
  } finally {
    await storage.close();
  }
  if (config.CMS_AUTH_ENABLED && !config.CMS_LINK_SECRET) {
    logger.warn("CMS_LINK_SECRET is not set: signed links last only as long as this server runs");
  }
  const linkSecret = config.CMS_LINK_SECRET ?? randomBytes(32).toString("base64url");
  const slots = new Map<Worker, number>();
  const listened = new Set<Worker>();
  let stopping = false;

  const fork = (slot: number) => {
    const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(slot), CMS_LINK_SECRET: linkSecret });
    slots.set(worker, slot);
  };
  const stopAll = (signal: NodeJS.Signals, exitCode: number) => {
    stopping = true;
    for (const worker of slots.keys()) worker.process.kill(signal);
    setTimeout(() => {
      for (const worker of slots.keys()) worker.process.kill("SIGKILL");
      process.exit(exitCode);
    }, STOP_TIMEOUT_MS).unref();
    process.exitCode = exitCode;
  };

  cluster.on("listening", (worker) => listened.add(worker));
  cluster.on("exit", (worker, code, signal) => {
    const slot = slots.get(worker) as number;
    slots.delete(worker);
    if (stopping) {
      if (slots.size === 0) process.exit();
      return;
    }
    if (!listened.has(worker)) {
      logger.error("worker failed to start; stopping", { worker: slot, pid: worker.process.pid, code, signal });
      stopAll("SIGTERM", 1);
      return;
    }
    logger.warn("worker exited; starting a replacement", { worker: slot, pid: worker.process.pid, code, signal });
    fork(slot);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    logger.info("stopping", { signal, workers: slots.size });
    stopAll(signal, 0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);

  logger.info("starting workers", { workers: count });
  // One scrape of /metrics through any worker answers for them all (cluster-metrics.ts).
  if (config.CMS_METRICS_ENABLED) (await import("./cluster-metrics.js")).gatherWorkerMetrics();
  for (let slot = 1; slot <= count; slot++) fork(slot);
}
