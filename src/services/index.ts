/**
 * The services behind the routes, built once from the app's deps. createApp mounts routes on them;
 * a runtime may also use them directly (src/runtime/node/fast-get.ts answers the hottest read with them).
 */
import type { AppDeps } from "../app-deps.js";
import { createImageDerivatives, DEFAULT_DERIVATIVE_SETTINGS } from "../images/derivatives.js";
import { createContentService } from "./content.js";
import { createPlaceholder } from "../images/thumbhash.js";
import { createFindingService } from "./finding.js";
import { createLifecycleService } from "./lifecycle.js";
import { createLockService } from "./locks.js";
import { createPackageService } from "./packages.js";
import { createResourceService } from "./resources.js";
import { createQuotaService } from "./quotas.js";
import { createRevisionService } from "./revisions.js";
import { createTusUploadService } from "./tus-uploads.js";
import { createDirectUploadService } from "./direct-uploads.js";
import { createWebhookService } from "./webhooks.js";

export type Services = ReturnType<typeof createServices>;

export function createServices(
  deps: Pick<AppDeps, "options" | "blobs" | "collector" | "store" | "fetchOrigin" | "newShortId" | "clock" | "logger"> &
    Partial<Pick<AppDeps, "metrics" | "images" | "derivatives">>,
) {
  const { options, store, blobs, clock, collector } = deps;
  const { limits } = options;
  const content = createContentService({
    blobs,
    collector,
    maxResourceBytes: limits.maxResourceBytes,
    contentOrigin: options.contentOrigin,
    // Reads are public with auth off or CMS_PUBLIC_READ (auth/guards.ts readsAreOpen).
    cache: { publicRead: options.auth === null || options.auth.publicRead, ...options.cache },
    metrics: deps.metrics,
    // The index, when there is one: it also forgets the purged derivatives it remembers in memory.
    derivatives: deps.derivatives ?? store.derivatives,
    logger: deps.logger,
    directReadMinBytes: options.direct?.readMinBytes ?? 0,
  });
  const packages = createPackageService({ blobs, content, newShortId: deps.newShortId, limits: limits.zip });
  const quotas = createQuotaService({ store, limits: options.quotas, clock });
  const placeholder = createPlaceholder(blobs, deps.images);
  const resources = createResourceService({
    store,
    content,
    packages,
    fetchOrigin: deps.fetchOrigin,
    newShortId: deps.newShortId,
    clock,
    quotas,
    placeholder,
  });
  const locks = createLockService({ store, resources, clock, ...options.locks });
  const lifecycle = createLifecycleService({ store, content, resources, clock, quotas, placeholder });
  const revisions = createRevisionService({ store, resources });
  const finding = createFindingService({ store, resources, clock });
  const tus = createTusUploadService({
    store,
    blobs,
    resources,
    lifecycle,
    quotas,
    clock,
    maxBytes: limits.maxResourceBytes,
    expiryMs: options.tus.expiryMs,
    maxPending: options.tus.maxPendingPerTenant,
  });
  const direct = createDirectUploadService({
    store,
    blobs,
    content,
    resources,
    quotas,
    clock,
    maxBytes: limits.maxResourceBytes,
    ttlSeconds: options.direct?.uploadUrlTtlSeconds ?? 3600,
  });
  const webhooks = createWebhookService({ store: store.webhooks, clock, allowPrivate: options.webhooks.allowPrivate });
  // One per app: the route and the runtimes' fast paths (stored derivatives) share it.
  const images = createImageDerivatives({
    blobs,
    transformer: deps.images,
    settings: options.images ?? DEFAULT_DERIVATIVE_SETTINGS,
    index: deps.derivatives,
    metrics: deps.metrics,
  });
  return {
    collector,
    content,
    images,
    packages,
    resources,
    locks,
    lifecycle,
    revisions,
    finding,
    tus,
    direct,
    quotas,
    webhooks,
  };
}
