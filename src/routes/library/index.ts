/**
 * The media library at `/library`: a server-rendered page and its bundled script
 * (/library/library.js, built by scripts/build.mjs), both from this origin so the page works offline.
 * It drives the public API only, with the token the explorer's login flow obtained when auth is on.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env.js";
import { ProblemError } from "../../problems.js";
import type { BlobStore } from "../../storage/blob-store.js";
import type { AssetReader } from "../../app-deps.js";
import { sendAsset, vendorAssets } from "../explorer/assets.js";
import type { ExplorerAuth } from "../explorer/page.js";
import { API_PREFIX } from "../meta.js";
import { MAX_LINK_SECONDS } from "../resources/schemas.js";
import { libraryPage } from "./page.js";

export const LIBRARY_PATH = "/library";
const SCRIPT = "library.js";

export interface LibraryOptions {
  auth: ExplorerAuth | null;
  /** The token claim listing a user's tenants (auth on). */
  tenantClaim: string | null;
  /** The image preset previews use (null: no image transforms on this runtime). */
  previewPreset: string | null;
  /** Where a token's roles are, when auth is on (the page reads its own token's). */
  roles: { clientId: string; realmRoles: boolean } | null;
  /** Where signed links point (CMS_CONTENT_ORIGIN, else CMS_PUBLIC_URL): previews load from there. */
  linkOrigin?: string;
  /** Where createUploadURL's URLs point when not at this service (uploadOrigins): the page sends files there. */
  uploadOrigins: readonly string[];
  /** The bucket's origin when getData redirects large content there (CMS_DIRECT_READ_MIN_BYTES). */
  readOrigins?: readonly string[];
  compressAssets: boolean;
}

/**
 * The origins createUploadURL hands out besides this service's own: the bucket's, from the store's
 * presigned URLs (S3, R2 with access keys); none on fs and memory, whose URLs are this service's.
 */
export const uploadOrigins = (blobs: Pick<BlobStore, "direct">): string[] =>
  blobs.direct ? [blobs.direct.origin] : [];

export function mountLibrary(app: OpenAPIHono<AppEnv>, readAsset: AssetReader, options: LibraryOptions) {
  const page = libraryPage({
    settings: {
      apiPrefix: API_PREFIX,
      tenantClaim: options.tenantClaim,
      maxLinkSeconds: MAX_LINK_SECONDS,
      previewPreset: options.previewPreset,
      roles: options.roles,
    },
    auth: options.auth,
    contentOrigins: [
      ...(options.linkOrigin ? [new URL(options.linkOrigin).origin] : []),
      ...(options.readOrigins ?? []),
    ],
    uploadOrigins: options.uploadOrigins,
  });
  // The page acts with the user's token: nothing inline runs, nothing foreign loads, never framed.
  const pageHeaders = {
    "content-security-policy": page.csp,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
  };
  app.get(LIBRARY_PATH, (c) => c.html(page.html, 200, pageHeaders));

  const assets = vendorAssets(readAsset, options.compressAssets);
  app.get(`${LIBRARY_PATH}/${SCRIPT}`, async (c) => {
    const asset = await assets(SCRIPT);
    if (!asset) throw new ProblemError("NOT_FOUND", `no ${SCRIPT}: build it with npm run build`);
    // Revalidated on every load (a new build must reach the page); unchanged, that costs a 304.
    return sendAsset(c, asset, "text/javascript; charset=utf-8", "no-cache");
  });
}
