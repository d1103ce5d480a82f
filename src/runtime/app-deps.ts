/**
 * The part of AppDeps every runtime builds the same way (token verifier, link signer, ids, clock), so
 * runtime/host/deps.ts and runtime/worker/deps.ts supply only storage, the origin fetcher and assets. Web APIs only.
 */
import type { AppDeps } from "../app.js";
import { createLinkSigner, randomLinkSecret } from "../auth/signed-links.js";
import { createTokenVerifier } from "../auth/verify-token.js";
import type { Config } from "../config.js";
import { createShortId } from "../lib/ids.js";
import type { Logger } from "../lib/logger.js";
import type { FetchOrigin } from "../origin/fetch-origin.js";
import { claimBlobStore, type StoreLabel } from "../services/store-owner.js";

/** What a runtime provides itself: where blobs, metadata and explorer assets live, and how origins are fetched. */
export interface RuntimeDeps extends Pick<AppDeps, "blobs" | "store" | "readAsset" | "platformCompresses"> {
  createFetchOrigin(options: { allowPrivate: boolean; totalTimeoutMs: number }): FetchOrigin;
  /** Default the real time; tests pass a clock they move themselves. */
  clock?: AppDeps["clock"];
  /** How a refusal names the blob store and the setting that gives a deployment its own. */
  storeLabel: StoreLabel;
}

/**
 * Completes the runtime's parts into everything createApp needs. Throws StoreOwnedElsewhere when
 * the blob store belongs to another deployment (services/store-owner.ts).
 */
export async function createAppDeps(config: Config, logger: Logger, runtime: RuntimeDeps): Promise<AppDeps> {
  await claimBlobStore({ blobs: runtime.blobs, store: runtime.store, label: runtime.storeLabel });
  if (config.CMS_AUTH_ENABLED && config.CMS_AUTH_ISSUER) {
    // Owners are issuer + subject now; rows from before that were created by this issuer's tokens.
    const adopted = await runtime.store.adoptLegacyOwners(config.CMS_AUTH_ISSUER);
    if (adopted > 0) logger.info("resources without an owner issuer adopted", { count: adopted, issuer: config.CMS_AUTH_ISSUER });
  }
  // One clock for every expiry: the services' (locks, links, tus) and the token verifier's.
  const clock = runtime.clock ?? (() => new Date());
  return {
    config,
    blobs: runtime.blobs,
    store: runtime.store,
    fetchOrigin: runtime.createFetchOrigin({
      allowPrivate: config.CMS_FETCH_ALLOW_PRIVATE,
      totalTimeoutMs: config.CMS_FETCH_TIMEOUT_MS,
    }),
    verifier: config.CMS_AUTH_ENABLED
      ? createTokenVerifier({
          issuer: config.CMS_AUTH_ISSUER as string,
          clientIds: [config.CMS_AUTH_CLIENT_ID, ...config.CMS_AUTH_CLIENTS],
          jwksUrl: config.CMS_AUTH_JWKS_URL,
          cooldownMs: config.CMS_AUTH_JWKS_COOLDOWN_MS,
          refetchFloorMs: config.CMS_AUTH_JWKS_REFETCH_FLOOR_MS,
          clock,
        })
      : null,
    links: await createLinkSigner(config.CMS_LINK_SECRET ?? randomLinkSecret()),
    newShortId: () => createShortId(),
    clock,
    logger,
    readAsset: runtime.readAsset,
    platformCompresses: runtime.platformCompresses,
  };
}
