/**
 * Workers wiring: bindings and vars → config → the deps of the one app (its server, built once per
 * isolate, is server.ts). Blobs in R2 (`BLOBS`), metadata in D1 (`DB`) through drizzle's D1 driver,
 * or in a remote libSQL database when `CMS_DATABASE_URL` names one. Web APIs only.
 */
import type { AppDeps } from "../../app.js";
import { type Config, ConfigError } from "../../config.js";
import type { Logger } from "../../lib/logger.js";
import { createDatabaseHealth, withDatabaseHealth } from "../../metadata/database-health.js";
import { type BatchSQLiteDatabase, createMetadataStore } from "../../metadata/metadata-store.js";
import type { AnalyticsEngineLike } from "./analytics-metrics.js";
import { d1Sessions } from "./d1-sessions.js";
import { edgeCachedContent } from "./edge-cache.js";
import { createCloudflareImages, type ImagesBindingLike } from "./cloudflare-images.js";
import { createR2BlobStore, type R2BucketLike } from "../../storage/drivers/r2.js";
import { createS3DirectStorage } from "../../storage/drivers/s3.js";
import type { DirectStorage } from "../../storage/blob-store.js";
import { createAppDeps } from "../app-deps.js";
import { createWorkerFetchOrigin } from "../../origin/worker-fetch.js";

/** The bindings this Worker uses (see wrangler.toml); vars and secrets arrive as strings beside them. */
export interface WorkerBindings {
  BLOBS: R2BucketLike;
  /** D1 database; not needed when CMS_DATABASE_URL names a remote libSQL database. */
  DB?: unknown;
  /** Static assets (`[assets]` in wrangler.toml): the vendored Swagger UI files. */
  ASSETS?: { fetch(request: Request): Promise<Response> };
  /** Workers Analytics Engine dataset (`[[analytics_engine_datasets]]`), optional: one data point per request. */
  METRICS?: AnalyticsEngineLike;
  /** Cloudflare Images (`[images]` in wrangler.toml), optional: getData's image parameters; without it 501. */
  IMAGES?: ImagesBindingLike;
}

/** libSQL URLs a Worker can reach: over HTTP(S) or WebSockets, never a local file. */
const REMOTE_DATABASE_URL = /^(libsql|https?|wss?):\/\//;

/** Only string values are settings: bindings are objects. */
export function settingsOf(env: object): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

async function openDatabase(
  env: WorkerBindings,
  config: Config,
  rawUrl: string | undefined,
  logger: Logger,
): Promise<BatchSQLiteDatabase> {
  if (rawUrl !== undefined && rawUrl !== "") {
    if (!REMOTE_DATABASE_URL.test(rawUrl)) {
      throw new ConfigError([`CMS_DATABASE_URL must be a remote libSQL URL (libsql://, https://, wss://) on Workers`]);
    }
    // Migrations are applied out of band (a Node instance at start-up, or drizzle-kit migrate): a Worker cannot read drizzle/.
    const [{ drizzle }, { createClient }] = await Promise.all([
      import("drizzle-orm/libsql/web"),
      import("@libsql/client/web"),
    ]);
    const client = createClient({ url: config.CMS_DATABASE_URL, authToken: config.CMS_DATABASE_AUTH_TOKEN });
    // An unreachable server answers 503 DATABASE_UNAVAILABLE, logged once per outage per isolate.
    return drizzle({ client: withDatabaseHealth(client, createDatabaseHealth(logger)) });
  }
  if (!env.DB) throw new ConfigError(["DB binding is missing (D1), and CMS_DATABASE_URL is not set"]);
  // D1 migrations are applied with `wrangler d1 migrations apply DB` (migrations_dir = "drizzle").
  const { drizzle } = await import("drizzle-orm/d1");
  // Each request's queries in its own D1 session (d1-sessions.ts); the binding itself where it has none.
  const client = d1Sessions(env.DB)?.client ?? env.DB;
  return drizzle(client as Parameters<typeof drizzle>[0]);
}

/** Presigned URLs on R2's S3 API when the CMS_R2_* settings name a key pair, an endpoint and the bucket. */
function r2Direct(config: Config): DirectStorage | undefined {
  const { CMS_R2_ACCESS_KEY_ID, CMS_R2_SECRET_ACCESS_KEY, CMS_R2_S3_ENDPOINT, CMS_R2_BUCKET } = config;
  if (!CMS_R2_ACCESS_KEY_ID || !CMS_R2_SECRET_ACCESS_KEY || !CMS_R2_S3_ENDPOINT || !CMS_R2_BUCKET) return undefined;
  return createS3DirectStorage({
    endpoint: CMS_R2_S3_ENDPOINT,
    bucket: CMS_R2_BUCKET,
    accessKeyId: CMS_R2_ACCESS_KEY_ID,
    secretAccessKey: CMS_R2_SECRET_ACCESS_KEY,
  });
}

/** Builds everything createApp needs from the bindings; nothing is contacted until a request needs it. */
export async function createWorkerDeps(
  env: WorkerBindings,
  config: Config,
  logger: Logger,
  clock?: AppDeps["clock"],
): Promise<AppDeps> {
  if (!env.BLOBS) throw new ConfigError(["BLOBS binding is missing (R2)"]);
  const db = await openDatabase(env, config, settingsOf(env).CMS_DATABASE_URL, logger);
  if (!config.CMS_LINK_SECRET) {
    logger.warn(
      "CMS_LINK_SECRET is not set: signed links work only on the isolate that made them (wrangler secret put CMS_LINK_SECRET)",
    );
  }
  const assets = env.ASSETS;
  // The routes ask for allow-listed names only; the host is irrelevant to the assets binding.
  const readFrom = (folder: string) => async (file: string) => {
    if (!assets) return null;
    const res = await assets.fetch(new Request(`https://assets.invalid/${folder}/${encodeURIComponent(file)}`));
    if (res.ok && res.body) return res.body;
    await res.body?.cancel();
    return null;
  };
  const deps = await createAppDeps(config, logger, {
    blobs: createR2BlobStore(env.BLOBS, { direct: r2Direct(config) }),
    store: createMetadataStore(db),
    createFetchOrigin: createWorkerFetchOrigin,
    readAsset: readFrom("vendor/swagger-ui-dist"),
    readLibraryAsset: readFrom("library"),
    // Workers compress by the client's Accept-Encoding themselves (a Content-Encoding we set would be applied again).
    platformCompresses: true,
    clock,
    storeLabel: {
      store: "the R2 bucket bound as BLOBS",
      setting: "BLOBS bucket (wrangler.toml [[r2_buckets]] bucket_name)",
    },
  });
  // The colo cache in front of the app (edge-cache.ts): the lifecycle routes tell it what a change made stale.
  const { auth } = deps.options;
  const cachedContent = edgeCachedContent(deps.store, auth === null || auth.publicRead);
  if (!env.IMAGES) return { ...deps, cachedContent };
  const images = createCloudflareImages(env.IMAGES, { maxPixels: config.CMS_IMAGE_MAX_PIXELS });
  return { ...deps, cachedContent, images };
}
