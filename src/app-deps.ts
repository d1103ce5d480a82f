/** What createApp needs from a runtime (own module: services/index.ts uses it without importing app.ts back). */
import type { LinkSigner } from "./auth/signed-links.js";
import type { TokenVerifier } from "./auth/verify-token.js";
import type { BlobCollector } from "./services/blob-collector.js";
import type { WebhookDeliverer } from "./services/webhook-deliverer.js";
import type { IdGenerator } from "./lib/ids.js";
import type { Logger } from "./lib/logger.js";
import type { Metrics } from "./metrics/metrics.js";
import type { MetadataStore } from "./metadata/metadata-store.js";
import type { FetchOrigin } from "./origin/fetch-origin.js";
import type { BlobStore } from "./storage/blob-store.js";
import type { ImageSettings } from "./images/params.js";
import type { ImageTransformer } from "./images/transformer.js";
import type { DerivativeIndex } from "./images/derivative-index.js";
import type { CachedContent } from "./delivery/stale-paths.js";

/** Reads one static file the app serves (swagger-ui-dist's, the library page's script); the runtime entry decides where from. */
export type AssetReader = (file: string) => Promise<ReadableStream<Uint8Array> | null>;

/** Auth settings, present only when auth is on: there is then always an issuer. */
export interface AuthOptions {
  /** Exact `iss` of accepted tokens; the explorer logs in there too. */
  issuer: string;
  /** This server's client id (expected in `aud`, the key of its roles) first, then further accepted `azp`s. */
  clientIds: string[];
  /** JWKS URL; unset = taken from the issuer's discovery document. */
  jwksUrl?: string;
  jwksCooldownMs: number;
  jwksRefetchFloorMs: number;
  /** The claim listing the tenants a token is confined to. */
  tenantClaim: string;
  /** Count realm roles as well as this client's. */
  realmRoles: boolean;
  /** getData readable without a token (content URLs are unguessable). */
  publicRead: boolean;
  /** The public client the API explorer logs in with. */
  explorerClientId: string;
}

/** Per-tenant quota limits (0 = none) and per-tenant overrides of them. */
export interface QuotaOptions {
  defaults: { bytes: number; resources: number; ingressBytesPerDay: number };
  overrides: Record<string, Partial<QuotaOptions["defaults"]>>;
}

/**
 * What createApp and the services are configured with: typed options, parsed once from the
 * environment at the composition root (config.ts `appOptions`). No environment names below it.
 */
export interface AppOptions {
  /** null when auth is off: every request is anonymous and allowed. */
  auth: AuthOptions | null;
  limits: {
    maxResourceBytes: number;
    /** Largest decoded resourceBinary (base64 in JSON) on create/update. */
    maxInlineBytes: number;
    zip: { maxEntries: number; maxTotalUncompressed: number; maxCompressionRatio: number };
  };
  locks: { ttlMs: number; maxTtlMs: number };
  tus: { expiryMs: number; maxPendingPerTenant: number };
  /**
   * Bytes straight to and from storage (docs/direct-storage.md). Optional: absent in older tests means
   * the defaults (URLs valid an hour, direct reads off).
   */
  direct?: { uploadUrlTtlSeconds: number; readMinBytes: number };
  quotas: QuotaOptions;
  /** How long a reservation protects a blob, and (Node/Bun) the time between collection passes. */
  collector: { graceMs: number; intervalMs: number };
  fetch: { allowPrivate: boolean; totalTimeoutMs: number };
  /** Webhook delivery (services/webhook-deliverer.ts); allowPrivate is CMS_FETCH_ALLOW_PRIVATE's. */
  webhooks: {
    allowPrivate: boolean;
    timeoutMs: number;
    maxAttempts: number;
    retryBaseMs: number;
    retryMaxMs: number;
    pollMs: number;
  };
  /** Origin of the absolute URLs handed out (signed links, the OpenAPI server); never the request's Host. */
  publicUrl?: string;
  /** The second origin that renders active content, when set. */
  contentOrigin?: string;
  /** How long caches may keep public mutable content (seconds; 0 = revalidate each time). */
  cache: { maxAge: number; staleWhileRevalidate: number };
  /** getData's image derivatives (issue 30). Optional: absent in older tests means the defaults. */
  images?: ImageSettings & {
    maxPixels: number;
    /** 0: the number of cores. */
    concurrency: number;
    timeoutSeconds: number;
    cacheBytes: number;
  };
}

export interface AppDeps {
  options: AppOptions;
  blobs: BlobStore;
  /** The one blob collector: the services reserve through it, the runtime schedules its passes. */
  collector: BlobCollector;
  /** The image derivative cache's index and bound (the collector's passes trim it too). */
  derivatives: DerivativeIndex;
  store: MetadataStore;
  fetchOrigin: FetchOrigin;
  /** The one webhook deliverer (built in runtime/app-deps.ts): the host pumps it, the Worker runs its passes. */
  webhookDeliverer: WebhookDeliverer;
  /** null when auth is off (options.auth null). */
  verifier: TokenVerifier | null;
  links: LinkSigner;
  newShortId: IdGenerator;
  clock: () => Date;
  logger: Logger;
  /** What the app and services report for operators; `noopMetrics` where nothing collects them. */
  metrics: Metrics;
  readAsset: AssetReader;
  /** Reads the /library page's built script (library.js). */
  readLibraryAsset: AssetReader;
  /** True where the platform compresses responses itself (Workers): the app then sends identity bytes. */
  platformCompresses: boolean;
  /** A cache in front of the app (the Worker's colo cache): the lifecycle routes tell it what a change made stale. */
  cachedContent?: CachedContent;
  /** Turns images into derivatives (sharp on Node and Bun); absent: transform requests answer 501. */
  images?: ImageTransformer;
}
