/**
 * Node/Bun wiring shared by the entry points: the fs blob store on the volume, the libSQL database
 * (created and migrated here), the SSRF-safe origin fetcher and the self-hosted explorer assets.
 */
import { createReadStream } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Client, createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";
import type { AppDeps } from "../app.js";
import { type Config, DEFAULT_DB_BUSY_TIMEOUT_MS } from "../config.js";
import type { Logger } from "../lib/logger.js";
import { createResourceStore } from "../metadata/resource-store.js";
import { createBlobCollector } from "../services/blob-collector.js";
import { createCachedBlobStore } from "../storage/drivers/cached.js";
import { createFsBlobStore } from "../storage/drivers/fs.js";
import { createS3BlobStore } from "../storage/drivers/s3.js";
import { createAppDeps } from "./app-deps.js";
import { scheduleCollector } from "./collector-schedule.js";
import { groupCommit, withDurableCommits } from "./durable-commits.js";
import { createNodeFetchOrigin } from "./node-fetch-origin.js";
import { withPreparedUriLookup } from "./prepared-lookup.js";
import { createSqliteFileClient } from "./sqlite-file-client.js";
import { nodeToWebStream } from "./node-streams.js";

// Two levels below the project root: here (src/runtime/) and in the bundle (dist/node/, scripts/build.mjs).
export const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../drizzle", import.meta.url));

type DatabaseSettings = Pick<Config, "CMS_DATABASE_URL" | "CMS_DATABASE_AUTH_TOKEN"> & Partial<Pick<Config, "CMS_DB_BUSY_TIMEOUT_MS">>;

export async function openDatabase(config: DatabaseSettings) {
  const url = config.CMS_DATABASE_URL;
  if (!url.startsWith("file:") || url.includes(":memory:")) {
    const client = createClient({ url, authToken: config.CMS_DATABASE_AUTH_TOKEN });
    return migrated(client);
  }
  const file = resolve(url.slice("file:".length));
  await mkdir(dirname(file), { recursive: true });
  const client = createSqliteFileClient({ file, maxWaitMs: config.CMS_DB_BUSY_TIMEOUT_MS ?? DEFAULT_DB_BUSY_TIMEOUT_MS });
  // WAL lets readers proceed during writes (switching to it takes the write lock, so it may wait).
  const { rows } = await client.execute("PRAGMA journal_mode = WAL");
  if (String(rows[0]?.[0]).toLowerCase() !== "wal") return migrated(client);
  // Commits are made durable off the main thread (see durable-commits.ts); NORMAL is only safe in WAL mode.
  await client.execute("PRAGMA synchronous = NORMAL");
  return migrated(withDurableCommits(client, groupCommit(() => fsyncWal(file))));
}

async function migrated(client: Client) {
  const db = drizzle(client);
  await migrateShared(db);
  return { db, close: () => client.close() };
}

async function fsyncFile(path: string) {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsyncs the database's WAL file (in libuv's thread pool); the database file itself if there is none. */
async function fsyncWal(databaseFile: string) {
  try {
    await fsyncFile(`${databaseFile}-wal`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    await fsyncFile(databaseFile);
  }
}

/**
 * Instances started together on a fresh database race to migrate it: the loser's migration fails
 * ("table … already exists", or SQLITE_BUSY) and is rolled back. Retrying finds the winner's
 * migrations recorded and applies only what is still missing.
 */
async function migrateShared(db: ReturnType<typeof drizzle>, attempts = 5) {
  for (let attempt = 1; ; attempt++) {
    try {
      await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
      return;
    } catch (err) {
      if (attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.random() * 100));
    }
  }
}

const swaggerDist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

export async function readSwaggerAsset(file: string) {
  const path = join(swaggerDist, file);
  try {
    if (!(await stat(path)).isFile()) return null;
  } catch {
    return null;
  }
  return nodeToWebStream(createReadStream(path));
}

/** Builds everything createApp needs; fails fast (before listening) if the volume or database is unusable. */
export async function createServerDeps(config: Config, logger: Logger): Promise<AppDeps & { close(): Promise<void> }> {
  const storage =
    config.CMS_STORAGE === "s3"
      ? createS3BlobStore({
          endpoint: config.CMS_S3_ENDPOINT as string,
          bucket: config.CMS_S3_BUCKET as string,
          region: config.CMS_S3_REGION,
          accessKeyId: config.CMS_S3_ACCESS_KEY_ID as string,
          secretAccessKey: config.CMS_S3_SECRET_ACCESS_KEY as string,
          prefix: config.CMS_S3_PREFIX,
        })
      : await createFsBlobStore({ root: config.CMS_VOLUME });
  await storage.check();
  // Content-addressed blobs never change, so hot small ones can be served from memory.
  const blobs =
    config.CMS_BLOB_CACHE_BYTES > 0
      ? createCachedBlobStore(storage, { maxBytes: config.CMS_BLOB_CACHE_BYTES, maxEntryBytes: config.CMS_BLOB_CACHE_ENTRY_BYTES })
      : storage;
  const database = await openDatabase(config);
  if (config.CMS_AUTH_ENABLED && !config.CMS_LINK_SECRET) {
    logger.warn("CMS_LINK_SECRET is not set: signed links last only as long as this process and work only on it");
  }
  const resourceStore = createResourceStore(database.db);
  const url = config.CMS_DATABASE_URL;
  const store = url.startsWith("file:") ? withPreparedUriLookup(resourceStore, url.slice("file:".length)) : null;
  const deps = await createAppDeps(config, logger, {
    blobs,
    store: store ?? resourceStore,
    createFetchOrigin: createNodeFetchOrigin,
    readAsset: readSwaggerAsset,
    platformCompresses: false,
  });
  const collector = scheduleCollector(
    createBlobCollector({ blobs, ledger: resourceStore.ledger, graceMs: config.CMS_GC_GRACE_SECONDS * 1000, now: Date.now, logger, tusUploads: resourceStore.tusUploads }),
    config.CMS_GC_INTERVAL_SECONDS * 1000,
    logger,
  );
  return {
    ...deps,
    close: async () => {
      await collector.stop();
      store?.close();
      database.close();
    },
  };
}
