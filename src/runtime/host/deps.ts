/**
 * Node/Bun wiring shared by the entry points: blob storage (blob-storage.ts), the migrated libSQL
 * database (database.ts) with the prepared getData lookup in front, the SSRF-safe origin fetcher,
 * the self-hosted explorer assets, and the blob collector on a timer.
 */
import type { AppDeps } from "../../app.js";
import type { Config } from "../../config.js";
import type { Logger } from "../../lib/logger.js";
import { createDatabaseHealth } from "../../metadata/database-health.js";
import { createMetadataStore } from "../../metadata/metadata-store.js";
import { createNodeFetchOrigin } from "../../origin/node-fetch.js";
import { createAppDeps } from "../app-deps.js";
import { openBlobStorage, storeLabelOf } from "./blob-storage.js";
import { scheduleCollector } from "./collector-schedule.js";
import { createWebhookDeliverer } from "../../services/webhook-deliverer.js";
import { scheduleDeliveries } from "./webhook-schedule.js";
import { openDatabase } from "./database.js";
import { readSwaggerAsset } from "./explorer-assets.js";
import { withPreparedUriLookup } from "./prepared-lookup.js";

/** Builds everything createApp needs; fails fast (before listening) if the volume or database is unusable. */
/** `collectBlobs: false` for all but one of several worker processes (runtime/host/workers.ts); `clock` for tests. */
export async function createServerDeps(
  config: Config,
  logger: Logger,
  { collectBlobs = true, clock }: { collectBlobs?: boolean; clock?: AppDeps["clock"] } = {},
): Promise<AppDeps & { close(): Promise<void> }> {
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
  const resourceStore = createMetadataStore(database.db);
  const url = config.CMS_DATABASE_URL;
  const store = url.startsWith("file:")
    ? withPreparedUriLookup(resourceStore, url.slice("file:".length), config.CMS_ROW_CACHE_ROWS, health)
    : null;
  // A store of another deployment (or any other failure here) gives the volume and database back.
  const deps = await createAppDeps(config, logger, {
    blobs,
    store: store ?? resourceStore,
    createFetchOrigin: createNodeFetchOrigin,
    readAsset: readSwaggerAsset,
    platformCompresses: false,
    clock,
    storeLabel: storeLabelOf(config),
  }).catch(async (err: unknown) => {
    store?.close();
    database.close();
    await closeBlobs();
    throw err;
  });
  // On the app's one clock, as tus expiry and lock expiry are (createAppDeps builds it; tests move it).
  const collector = !collectBlobs
    ? null
    : scheduleCollector(deps.collector, deps.options.collector.intervalMs, logger, deps.clock);
  const { webhooks } = deps.options;
  const deliveries = scheduleDeliveries(
    createWebhookDeliverer({
      store: deps.store.webhooks,
      send: deps.webhookFetch,
      now: () => deps.clock().getTime(),
      logger,
      ...webhooks,
    }),
    webhooks.pollMs,
    logger,
  );
  return {
    ...deps,
    close: async () => {
      await collector?.stop();
      await deliveries.stop();
      store?.close();
      database.close();
      await closeBlobs();
    },
  };
}
