/** What createApp needs from a runtime (own module: services/index.ts uses it without importing app.ts back). */
import type { LinkSigner } from "./auth/signed-links.js";
import type { TokenVerifier } from "./auth/verify-token.js";
import type { Config } from "./config.js";
import type { IdGenerator } from "./lib/ids.js";
import type { Logger } from "./lib/logger.js";
import type { MetadataStore } from "./metadata/metadata-store.js";
import type { AssetReader } from "./routes/explorer/index.js";
import type { FetchOrigin } from "./origin/fetch-origin.js";
import type { BlobStore } from "./storage/blob-store.js";

export type AppConfig = Pick<
  Config,
  | "CMS_MAX_RESOURCE_BYTES"
  | "CMS_MAX_INLINE_BYTES"
  | "CMS_LOCK_TTL"
  | "CMS_TUS_EXPIRY_SECONDS"
  | "CMS_TUS_MAX_PENDING_PER_TENANT"
  | "CMS_QUOTA_BYTES"
  | "CMS_QUOTA_RESOURCES"
  | "CMS_QUOTA_INGRESS_BYTES_PER_DAY"
  | "CMS_QUOTA_OVERRIDES"
  | "CMS_LOCK_MAX_TTL"
  | "CMS_ZIP_MAX_ENTRIES"
  | "CMS_ZIP_MAX_BYTES"
  | "CMS_ZIP_MAX_RATIO"
  | "CMS_GC_GRACE_SECONDS"
  | "CMS_AUTH_ENABLED"
  | "CMS_AUTH_ISSUER"
  | "CMS_AUTH_EXPLORER_CLIENT_ID"
  | "CMS_AUTH_TENANT_CLAIM"
  | "CMS_AUTH_REALM_ROLES"
  | "CMS_PUBLIC_READ"
  | "CMS_PUBLIC_URL"
  | "CMS_CONTENT_ORIGIN"
>;

export interface AppDeps {
  config: AppConfig;
  blobs: BlobStore;
  store: MetadataStore;
  fetchOrigin: FetchOrigin;
  /** null when auth is off (CMS_AUTH_ENABLED=false). */
  verifier: TokenVerifier | null;
  links: LinkSigner;
  newShortId: IdGenerator;
  clock: () => Date;
  logger: Logger;
  readAsset: AssetReader;
  /** True where the platform compresses responses itself (Workers): the app then sends identity bytes. */
  platformCompresses: boolean;
}
