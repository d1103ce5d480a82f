/**
 * Node/Bun wiring shared by the entry points: blob storage (blob-storage.ts), the migrated libSQL
 * database (database.ts) with the prepared getData lookup in front, the SSRF-safe origin fetcher,
 * the self-hosted explorer assets, and the blob collector on a timer.
 */
import cluster from "node:cluster";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { AppDeps } from "../../app.js";
import type { Config } from "../../config.js";
import type { Logger } from "../../lib/logger.js";
import { createDatabaseHealth } from "../../metadata/database-health.js";
import { createMetadataStore, type MetadataStore } from "../../metadata/metadata-store.js";
import { withReadReplica } from "../../metadata/read-replica.js";
import { type RowCachedStore, withRowCache } from "../../metadata/row-cache.js";
import { createNodeFetchOrigin } from "../../origin/node-fetch.js";
import type { BlobStore } from "../../storage/blob-store.js";
import type { CachedBlobStore } from "../../storage/drivers/cached.js";
import { createAppDeps } from "../app-deps.js";
import { openBlobStorage, storeLabelOf } from "./blob-storage.js";
import { scheduleCollector } from "./collector-schedule.js";
import { type DeliverySchedule, scheduleDeliveries } from "./webhook-schedule.js";
import { openDatabase, openReadReplica } from "./database.js";
import { databaseClock } from "./database-clock.js";
import { readSwaggerAsset } from "./explorer-assets.js";
import { nodeHmac } from "./hmac.js";
import { instanceIdOf } from "./instance-id.js";
import { clusterScrape } from "./cluster-metrics.js";
import { createMetricsEndpoint, type MetricsEndpoint } from "./metrics-endpoint.js";
import { createPromMetrics } from "./prom-metrics.js";
import { outgoingTraceparent } from "./trace-scope.js";
import { readLibraryAsset } from "./library-assets.js";
import { withPreparedUriLookup } from "./prepared-lookup.js";
import { claimSpoolDir } from "./image-spool.js";
import { createSharpImages } from "./sharp-images.js";

const isCached = (blobs: BlobStore): blobs is CachedBlobStore => "stats" in blobs;

/** Builds everything createApp needs; fails fast (before listening) if the volume or database is unusable. */
/** `collectBlobs: false` for all but one of several worker processes (runtime/host/workers.ts); `clock` for tests. */
export async function createServerDeps(
  config: Config,
  logger: Logger,
  { collectBlobs = true, clock }: { collectBlobs?: boolean; clock?: AppDeps["clock"] } = {},
): Promise<
  AppDeps & {
    close(): Promise<void>;
    metricsEndpoint: MetricsEndpoint | null;
    /** This process's webhook delivery pump (`drain()`: the idle signal tests await). */
    webhookDeliveries: DeliverySchedule["pump"];
    /** Resolves once the blob collector's start-up pass has run and no pass is running. */
    collectorIdle(): Promise<void>;
  }
> {
  const { blobs, close: closeBlobs } = await openBlobStorage(config);
  // A database that cannot open gives the volume back (its claimed temp folder goes).
  // One judge of the database's availability for this process: each outage is logged once.
  const health = createDatabaseHealth(logger);
  const database = await openDatabase(config, health).catch(async (err: unknown) => {
    await closeBlobs();
    throw err;
  });
  if (config.CMS_AUTH_ENABLED && !config.CMS_LINK_SECRET) {
    logger.warn("CMS_LINK_SECRET is not set: signed links last only as long as this process and work only on it");
  }
  const remote = await remoteParts(config, database.db.$client, clock, logger).catch(async (err: unknown) => {
    database.close();
    await closeBlobs();
    throw err;
  });
  const { replica } = remote;
  const resourceStore = servingStore(config, createMetadataStore(database.db), replica, logger);
  const url = config.CMS_DATABASE_URL;
  const store = url.startsWith("file:")
    ? withPreparedUriLookup(resourceStore, url.slice("file:".length), config.CMS_ROW_CACHE_ROWS, health)
    : null;
  const metrics = config.CMS_METRICS_ENABLED ? createPromMetrics({ instanceId: instanceIdOf(config) }) : null;
  // A store of another deployment (or any other failure here) gives the volume and database back.
  // CMS_IMAGE_CONCURRENCY=0 means the cores: counted here, since Node 20 has no navigator.hardwareConcurrency.
  const imageConcurrency = config.CMS_IMAGE_CONCURRENCY || availableParallelism();
  const deps = await createAppDeps({ ...config, CMS_IMAGE_CONCURRENCY: imageConcurrency }, logger, {
    blobs,
    store: store ?? resourceStore,
    // Origin fetches carry the request's trace onwards (W3C traceparent, as a child span).
    createFetchOrigin: (options) => createNodeFetchOrigin({ ...options, traceparent: outgoingTraceparent }),
    metrics: metrics ?? undefined,
    hmacOf: nodeHmac,
    readAsset: readSwaggerAsset,
    readLibraryAsset,
    platformCompresses: false,
    clock: clock ?? remote.databaseClock?.clock,
    storeLabel: storeLabelOf(config),
  }).catch(async (err: unknown) => {
    store?.close();
    remote.close();
    database.close();
    await closeBlobs();
    throw err;
  });
  metrics?.observe({
    blobCache: isCached(blobs) ? blobs.stats : undefined,
    // The file database's prepared lookup, or a remote database's row cache (metadata/row-cache.ts).
    rowCache: store?.rowCacheStats ?? ("rowCacheStats" in resourceStore ? resourceStore.rowCacheStats : undefined),
    pendingUploads: () => resourceStore.tusUploads.pending(deps.clock().getTime()),
    webhookOutbox: async () => {
      const { pending, oldestPendingAt } = await resourceStore.webhooks.depth();
      const age = oldestPendingAt === null ? 0 : (deps.clock().getTime() - oldestPendingAt) / 1000;
      return { pending, oldestPendingSeconds: Math.max(0, age) };
    },
  });
  // On the app's one clock, as tus expiry and lock expiry are (createAppDeps builds it; tests move it).
  const collector = !collectBlobs
    ? null
    : scheduleCollector(deps.collector, deps.options.collector.intervalMs, logger, deps.clock);
  const deliveries = scheduleDeliveries(deps.webhookDeliverer, deps.options.webhooks.pollMs, logger);
  // Large image sources are spooled here; a killed process's folder goes when the next one starts.
  const spool = await claimSpoolDir(join(tmpdir(), "cms-image-spool")).catch((err: unknown) => {
    logger.warn("no image spool folder of this process's own; spooling in the OS temp folder", { error: err });
    return { dir: tmpdir(), release: async () => {} };
  });
  return {
    ...deps,
    images: createSharpImages({
      spoolDir: spool.dir,
      maxPixels: config.CMS_IMAGE_MAX_PIXELS,
      timeoutSeconds: config.CMS_IMAGE_TIMEOUT_SECONDS,
      // Per process, one per transform slot, at most 4 (of 8 MiB: 32 MiB), made when first needed:
      // a source arriving while all are in use goes through a temp file.
      buffers: { count: Math.min(imageConcurrency, 4) },
    }),
    webhookDeliveries: deliveries.pump,
    // A cluster worker's scrape answers for every worker (cluster-metrics.ts).
    metricsEndpoint: metrics
      ? createMetricsEndpoint(
          cluster.isWorker ? clusterScrape(metrics.registry) : metrics.scrape,
          config.CMS_METRICS_TOKEN,
        )
      : null,
    /** Resolves once the collector's start-up pass has run and none is running (for tests counting I/O). */
    collectorIdle: async () => collector?.idle(),
    close: async () => {
      await collector?.stop();
      await deliveries.stop();
      store?.close();
      remote.close();
      database.close();
      await closeBlobs();
      await spool.release();
    },
  };
}

/**
 * What a remote database adds: its read replica (CMS_DATABASE_READ_URL), and its server's clock for
 * every expiry unless a test gives the clock (database-clock.ts; a `file:` database is on this machine).
 */
async function remoteParts(
  config: Config,
  client: Parameters<typeof databaseClock>[0],
  clock: AppDeps["clock"] | undefined,
  logger: Logger,
) {
  const onServer = !clock && !config.CMS_DATABASE_URL.startsWith("file:");
  const serverClock = onServer
    ? await databaseClock(client, {
        onOffset: (offsetMs) => {
          if (Math.abs(offsetMs) > 1000) logger.warn("this machine's clock is off the database's", { offsetMs });
        },
      })
    : null;
  const replica = config.CMS_DATABASE_READ_URL
    ? await openReadReplica(config.CMS_DATABASE_READ_URL, config.CMS_DATABASE_AUTH_TOKEN).catch((err: unknown) => {
        serverClock?.stop();
        throw err;
      })
    : null;
  return {
    replica,
    databaseClock: serverClock,
    close() {
      serverClock?.stop();
      replica?.close();
    },
  };
}

/**
 * The store over the primary, with serving reads on the read replica when there is one, and for a
 * remote database the row cache in front (CMS_ROW_CACHE_TTL_MS; a `file:` database gets
 * prepared-lookup.ts's instead).
 */
function servingStore(
  config: Config,
  primary: MetadataStore,
  replica: { db: Parameters<typeof createMetadataStore>[0] } | null,
  logger: Logger,
): MetadataStore | RowCachedStore {
  let loggedAt = Number.NEGATIVE_INFINITY;
  const store = replica
    ? withReadReplica(primary, createMetadataStore(replica.db), (err) => {
        // At most once a minute: meanwhile every read that failed there went to the primary.
        if (performance.now() - loggedAt < 60_000) return;
        loggedAt = performance.now();
        logger.warn("read replica failed; reading the primary", { err });
      })
    : primary;
  const remote = !config.CMS_DATABASE_URL.startsWith("file:");
  if (!remote || config.CMS_ROW_CACHE_ROWS === 0 || config.CMS_ROW_CACHE_TTL_MS === 0) return store;
  return withRowCache(store, { rows: config.CMS_ROW_CACHE_ROWS, ttlMs: config.CMS_ROW_CACHE_TTL_MS });
}
