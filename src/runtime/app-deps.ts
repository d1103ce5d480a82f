/**
 * The part of AppDeps every runtime builds the same way (token verifier, link signer, ids, clock,
 * the webhook deliverer), so
 * runtime/host/deps.ts and runtime/worker/deps.ts supply only storage, the origin fetcher and assets. Web APIs only.
 */
import type { AppDeps } from "../app.js";
import { createLinkSigner, randomLinkSecret } from "../auth/signed-links.js";
import type { HmacOf } from "../lib/hmac.js";
import { createTokenVerifier } from "../auth/verify-token.js";
import { appOptions, type Config } from "../config.js";
import { createShortId } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import { countCollectorPasses, countOriginFetches } from "./counted.js";
import { type Metrics, noopMetrics } from "../metrics/metrics.js";
import type { FetchOrigin } from "../origin/fetch-origin.js";
import { type UrlSubject, WEBHOOK_URL } from "../origin/guard.js";
import { createBlobCollector } from "../services/blob-collector.js";
import { createWebhookDeliverer } from "../services/webhook-deliverer.js";
import { createDerivativeIndex } from "../images/derivative-index.js";
import { DEFAULT_DERIVATIVE_SETTINGS } from "../images/derivatives.js";
import { claimBlobStore, type StoreLabel } from "../services/store-owner.js";

/** What a runtime provides itself: where blobs, metadata and explorer assets live, and how origins are fetched. */
export interface RuntimeDeps
  extends Pick<AppDeps, "blobs" | "store" | "readAsset" | "readLibraryAsset" | "platformCompresses"> {
  createFetchOrigin(options: {
    allowPrivate: boolean;
    totalTimeoutMs: number;
    maxRedirects?: number;
    /** What its problems call the URL (origin/guard.ts); default the external URI. */
    subject?: UrlSubject;
  }): FetchOrigin;
  /** Default the real time; tests pass a clock they move themselves. */
  clock?: AppDeps["clock"];
  /** How a refusal names the blob store and the setting that gives a deployment its own. */
  storeLabel: StoreLabel;
  /** What collects the app's metrics (Node/Bun: prom-client when CMS_METRICS_ENABLED); none by default. */
  metrics?: Metrics;
  /** The signed links' HMAC (Node/Bun: node:crypto's, synchronous); Web Crypto's by default. */
  hmacOf?: HmacOf;
}

/**
 * Completes the runtime's parts into everything createApp needs: the configuration becomes typed
 * options here, once, and the blob collector is built here, once. Throws StoreOwnedElsewhere when
 * the blob store belongs to another deployment (services/store-owner.ts).
 */
export async function createAppDeps(config: Config, logger: Logger, runtime: RuntimeDeps): Promise<AppDeps> {
  const options = appOptions(config);
  const { auth } = options;
  const { blobs, store } = runtime;
  await claimBlobStore({ blobs, store, label: runtime.storeLabel, takeover: config.CMS_STORE_TAKEOVER, logger });
  if (auth) await adoptLegacyOwners(store, auth.issuer, logger);
  // One clock for every expiry: the services' (locks, links, tus) and the token verifier's.
  const clock = runtime.clock ?? (() => new Date());
  const metrics = runtime.metrics ?? noopMetrics;
  // The image derivative cache's bound, kept by the app's requests and the collector's passes alike.
  const derivatives = createDerivativeIndex({
    blobs,
    store: store.derivatives,
    maxBytes: (options.images ?? DEFAULT_DERIVATIVE_SETTINGS).cacheBytes,
    now: () => clock().getTime(),
    logger,
  });
  const collector = countCollectorPasses(
    createBlobCollector({
      blobs,
      ledger: store.ledger,
      graceMs: options.collector.graceMs,
      now: () => clock().getTime(),
      logger,
      tusUploads: store.tusUploads,
      directUploads: store.directUploads,
      derivatives,
    }),
    metrics,
  );
  return {
    options,
    blobs,
    collector,
    derivatives,
    store,
    fetchOrigin: countOriginFetches(runtime.createFetchOrigin(options.fetch), metrics),
    webhookDeliverer: createWebhookDeliverer({
      store: store.webhooks,
      // A POST is never sent on to a redirect's target: a 3xx is a failed attempt.
      send: runtime.createFetchOrigin({
        allowPrivate: options.webhooks.allowPrivate,
        totalTimeoutMs: options.webhooks.timeoutMs,
        maxRedirects: 0,
        subject: WEBHOOK_URL,
      }),
      now: () => clock().getTime(),
      logger,
      metrics,
      ...options.webhooks,
    }),
    verifier: auth
      ? createTokenVerifier({
          issuer: auth.issuer,
          clientIds: auth.clientIds,
          jwksUrl: auth.jwksUrl,
          cooldownMs: auth.jwksCooldownMs,
          refetchFloorMs: auth.jwksRefetchFloorMs,
          clock,
        })
      : null,
    links: await createLinkSigner(config.CMS_LINK_SECRET ?? randomLinkSecret(), runtime.hmacOf),
    newShortId: () => createShortId(),
    clock,
    logger,
    metrics,
    readAsset: runtime.readAsset,
    readLibraryAsset: runtime.readLibraryAsset,
    platformCompresses: runtime.platformCompresses,
  };
}

/** Owners are issuer + subject now; rows from before that were created by this issuer's tokens. */
async function adoptLegacyOwners(store: AppDeps["store"], issuer: string, logger: Logger) {
  const adopted = await store.adoptLegacyOwners(issuer);
  if (adopted > 0) logger.info("resources without an owner issuer adopted", { count: adopted, issuer });
}
