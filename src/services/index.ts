/**
 * The services behind the routes, built once from the app's deps. createApp mounts routes on them;
 * a runtime may also use them directly (src/runtime/node/fast-get.ts answers the hottest read with them).
 */
import type { AppDeps } from "../app-deps.js";
import { createBlobCollector } from "./blob-collector.js";
import { createContentService } from "./content.js";
import { createLifecycleService } from "./lifecycle.js";
import { createLockService } from "./locks.js";
import { createPackageService } from "./packages.js";
import { createResourceService } from "./resources.js";
import { createQuotaService } from "./quotas.js";
import { createRevisionService } from "./revisions.js";
import { createTusUploadService } from "./tus-uploads.js";

export type Services = ReturnType<typeof createServices>;

export function createServices(deps: Pick<AppDeps, "config" | "blobs" | "store" | "fetchOrigin" | "newShortId" | "clock" | "logger">) {
  const { config, store, blobs, clock } = deps;
  const collector = createBlobCollector({
    blobs,
    ledger: store.ledger,
    graceMs: config.CMS_GC_GRACE_SECONDS * 1000,
    now: () => clock().getTime(),
    logger: deps.logger,
  });
  const content = createContentService({
    blobs,
    collector,
    maxResourceBytes: config.CMS_MAX_RESOURCE_BYTES,
    contentOrigin: config.CMS_CONTENT_ORIGIN,
  });
  const packages = createPackageService({
    blobs,
    content,
    newShortId: deps.newShortId,
    limits: {
      maxEntries: config.CMS_ZIP_MAX_ENTRIES,
      maxTotalUncompressed: config.CMS_ZIP_MAX_BYTES,
      maxCompressionRatio: config.CMS_ZIP_MAX_RATIO,
    },
  });
  const quotas = createQuotaService({ store, config, clock });
  const resources = createResourceService({ store, content, packages, fetchOrigin: deps.fetchOrigin, newShortId: deps.newShortId, clock, quotas });
  const locks = createLockService({
    store,
    resources,
    clock,
    ttlMs: config.CMS_LOCK_TTL * 1000,
    maxTtlMs: config.CMS_LOCK_MAX_TTL * 1000,
  });
  const lifecycle = createLifecycleService({ store, content, resources, clock, quotas });
  const revisions = createRevisionService({ store, resources });
  const tus = createTusUploadService({
    store,
    blobs,
    resources,
    quotas,
    clock,
    maxBytes: config.CMS_MAX_RESOURCE_BYTES,
    expiryMs: config.CMS_TUS_EXPIRY_SECONDS * 1000,
    maxPending: config.CMS_TUS_MAX_PENDING_PER_TENANT,
  });
  return { collector, content, packages, resources, locks, lifecycle, revisions, tus, quotas };
}
