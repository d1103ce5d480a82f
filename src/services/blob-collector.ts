/**
 * Blob lifetime. Blobs are shared (content-addressed per tenant) and live outside the database, so
 * deleting one can race a create that is about to reuse it. The rule that makes this safe on every
 * driver and across instances sharing a database and a store:
 *
 * - A create *reserves* the key in the ledger before it checks whether the blob exists; its row
 *   insert consumes the reservation in the same batch, and the database refuses (trigger) a row whose
 *   blob is not reserved or is claimed for deletion.
 * - Only this collector deletes blobs, and only after *dooming* the key in one statement that
 *   re-checks "no row references it, no reservation is live" under the database's serialisation.
 *   A reservation arriving at a doomed key waits until the deletion is over, then stores its own copy.
 * - A reservation never consumed (its process died) counts as abandoned after the grace period.
 * - Nothing is ever deleted that the ledger has no row for. Every blob this deployment stores has
 *   one from its reservation (made before the blob is written) until after its deletion, so a blob
 *   without one was never this database's to delete: another deployment's sharing the store (one
 *   that refused to start since the owner marker, or one from before it), or data older than the
 *   ledger. The sweep only counts such blobs for the log.
 *
 * Assumption (documented in the README): a collector finishes deleting one blob within
 * STALE_DOOM_MS of dooming it; past that, another instance takes the deletion over.
 */
import type { Logger } from "../lib/logger.js";
import type { BlobLedger } from "../metadata/blob-ledger.js";
import type { DerivativeIndex } from "../images/derivative-index.js";
import type { TusUploadStore } from "../metadata/tus-store.js";
import type { BlobKey, BlobStore } from "../storage/blob-store.js";
import { STAGING_MAX_AGE_MS, STAGING_PREFIX, stagedAt } from "../storage/staging.js";
import { collectExpiredUploads } from "./tus-parts.js";
import type { DirectUploadStore } from "../metadata/direct-upload-store.js";
import { collectExpiredDirectUploads } from "./direct-slots.js";

/** A deletion claimed this long ago and not finished is taken over (its collector died). */
export const STALE_DOOM_MS = 30_000;
/** How often a reservation waiting on a deletion looks again. */
const WAIT_STEP_MS = 20;
/** Keys looked at per batch of a pass (a pass continues until none is due). */
const BATCH = 200;
/** Top-level prefix of every content key (storage/keys.ts). */
const CONTENT_PREFIX = "t/";
/** Keys listed per ledger lookup by `contentKeyChunks`' callers. */
const LISTED_PER_LOOKUP = 500;

/** Every content blob key in the store, in chunks (each looked up in the ledger at once). */
export async function* contentKeyChunks(blobs: BlobStore): AsyncGenerator<string[]> {
  let chunk: string[] = [];
  for await (const key of blobs.list(CONTENT_PREFIX)) {
    chunk.push(key);
    if (chunk.length < LISTED_PER_LOOKUP) continue;
    yield chunk;
    chunk = [];
  }
  if (chunk.length > 0) yield chunk;
}

export interface BlobCollectorDeps {
  blobs: BlobStore;
  ledger: BlobLedger;
  /** How long a reservation protects a blob before it counts as abandoned. */
  graceMs: number;
  now: () => number;
  logger?: Logger;
  /** When given, each pass also removes every expired tus upload (row and parts). */
  tusUploads?: TusUploadStore;
  /** When given, each pass also removes every expired direct upload (row, reservation and object). */
  directUploads?: DirectUploadStore;
  /** When given, each pass also trims the image derivative cache to its bound (least recently used first). */
  derivatives?: Pick<DerivativeIndex, "evict">;
}

export interface CollectFigures {
  /** Blobs deleted. */
  removed: number;
  /** Keys looked at but kept (referenced, reserved, or claimed by another collector). */
  kept: number;
  /** Deletions of dead collectors finished. */
  takenOver: number;
  /** Expired uploads removed (tus and direct). */
  uploadsExpired: number;
  /** Image derivatives deleted to keep the cache under CMS_IMAGE_CACHE_BYTES. */
  derivativesEvicted: number;
  /** Staged blobs (storage/staging.ts) older than any request, left by a crash. */
  stagedRemoved: number;
}

export type BlobCollector = ReturnType<typeof createBlobCollector>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createBlobCollector({
  blobs,
  ledger,
  graceMs,
  now,
  logger,
  tusUploads,
  directUploads,
  derivatives,
}: BlobCollectorDeps) {
  /** Deletes a blob this collector doomed at `doomedAt`, then its ledger row. */
  async function remove(key: string, doomedAt: number): Promise<boolean> {
    // Too late to start: another instance may already be taking this deletion over.
    if (now() - doomedAt > STALE_DOOM_MS / 2) return false;
    await blobs.delete(key as BlobKey);
    await ledger.forget(key, doomedAt);
    return true;
  }

  /** Finishes a deletion whose collector stopped; true if this caller did it. */
  async function takeOver(key: string, doomedAt: number): Promise<boolean> {
    const at = now();
    return (await ledger.redoom(key, doomedAt, at)) && (await remove(key, at));
  }

  /** Deletes `key` if the ledger lets it go now; otherwise notes when to look again. */
  async function collectOne(key: string): Promise<boolean> {
    const at = now();
    if (await ledger.doom(key, at, at - graceMs)) return remove(key, at);
    await ledger.postpone(key, graceMs);
    return false;
  }

  /** Deletes the staged blobs no running request can still hold; how many. */
  async function removeAbandonedStaging(): Promise<number> {
    const before = now() - STAGING_MAX_AGE_MS;
    let removed = 0;
    for await (const key of blobs.list(STAGING_PREFIX)) {
      const at = stagedAt(key);
      if (at === null || at >= before) continue;
      await blobs.delete(key);
      removed++;
    }
    return removed;
  }

  return {
    graceMs,

    /**
     * The reservation a content-addressed put makes before it relies on an existing blob (see
     * `PutOptions.reserve`): waits while a collector deletes that blob, taking over a dead one's.
     */
    async reserve(key: BlobKey): Promise<void> {
      for (;;) {
        const doomedAt = await ledger.reserve(key, now(), graceMs);
        if (doomedAt === null) return;
        // A stale claim, or one whose blob is already gone (its collector failed to drop the ledger
        // row, e.g. on a full disk): finish that deletion now instead of waiting for it.
        if (doomedAt !== 0 && (now() - doomedAt > STALE_DOOM_MS || (await blobs.head(key)) === null))
          await takeOver(key, doomedAt);
        else await sleep(WAIT_STEP_MS);
      }
    },

    /** Gives up a reservation of a put whose row was never written, and deletes the blob if nothing else needs it. */
    async release(key: string): Promise<void> {
      await ledger.release(key, now());
      await collectOne(key);
    },

    /**
     * Deletes each of `keys` nothing references or awaits any more; how many were deleted. Best
     * effort: a key that fails (storage or database error) is left to a later pass.
     */
    async collect(keys: readonly string[]): Promise<number> {
      let removed = 0;
      for (const key of keys) {
        try {
          if (await collectOne(key)) removed++;
        } catch (err) {
          logger?.warn("blob collection failed", { key, error: err });
        }
      }
      return removed;
    },

    /**
     * One collection pass: every key due for a look (purged, released, or with a lapsed
     * reservation), then deletions left unfinished by dead collectors, then expired tus uploads,
     * then image derivatives past the cache's bound, then staged blobs a crash left behind.
     * Errors are logged per key.
     */
    async pass(): Promise<CollectFigures> {
      const figures: CollectFigures = {
        removed: 0,
        kept: 0,
        takenOver: 0,
        uploadsExpired: 0,
        derivativesEvicted: 0,
        stagedRemoved: 0,
      };
      const failed = new Set<string>();
      for (;;) {
        const due = (await ledger.due(now(), BATCH + failed.size)).filter((key) => !failed.has(key));
        if (due.length === 0) break;
        for (const key of due) {
          try {
            if (await collectOne(key)) figures.removed++;
            else figures.kept++;
          } catch (err) {
            failed.add(key);
            logger?.warn("blob collection failed", { key, error: err });
          }
        }
      }
      for (const { key, doomedAt } of await ledger.staleDooms(now() - STALE_DOOM_MS, BATCH)) {
        try {
          if (await takeOver(key, doomedAt)) figures.takenOver++;
        } catch (err) {
          logger?.warn("blob collection failed", { key, error: err });
        }
      }
      // Expired uploads (tus, direct): batches until a short one; a failure is left to the next pass.
      const expiring: [string, () => Promise<number>][] = [];
      if (tusUploads) expiring.push(["expired upload", () => collectExpiredUploads(tusUploads, blobs, now(), BATCH)]);
      if (directUploads)
        expiring.push(["expired direct upload", () => collectExpiredDirectUploads(directUploads, blobs, now(), BATCH)]);
      for (const [what, collectBatch] of expiring) {
        try {
          let n: number;
          do {
            n = await collectBatch();
            figures.uploadsExpired += n;
          } while (n === BATCH);
        } catch (err) {
          logger?.warn(`${what} collection failed`, { error: err });
        }
      }
      if (derivatives) {
        try {
          figures.derivativesEvicted = await derivatives.evict();
        } catch (err) {
          logger?.warn("image derivative eviction failed", { error: err });
        }
      }
      try {
        figures.stagedRemoved = await removeAbandonedStaging();
      } catch (err) {
        logger?.warn("staged blob collection failed", { error: err });
      }
      return figures;
    },

    /**
     * Lists the store and counts the blobs the ledger has no record of (see the top of this file:
     * they are never collected), logging how many and a few of their keys.
     */
    async sweep(): Promise<number> {
      let strangers = 0;
      const examples: string[] = [];
      for await (const chunk of contentKeyChunks(blobs)) {
        const unknown = await ledger.unknown(chunk);
        strangers += unknown.length;
        examples.push(...unknown.slice(0, 3 - examples.length));
      }
      if (strangers > 0) {
        logger?.warn("blobs this database has no record of are in the store; they are left alone", {
          count: strangers,
          examples,
        });
      }
      return strangers;
    },
  };
}
