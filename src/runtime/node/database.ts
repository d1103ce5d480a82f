/**
 * The libSQL database of Node/Bun: a local file through our own client (WAL, synchronous=NORMAL,
 * commits made durable by a grouped fsync off the main thread), anything else through
 * @libsql/client; migrated before it is used.
 */
import { mkdir, open } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import { type Config, DEFAULT_DB_BUSY_TIMEOUT_MS } from "../../config.js";
import { groupCommit, withDurableCommits } from "./durable-commits.js";
import { migrateShared } from "./migrations.js";
import { createSqliteFileClient } from "./sqlite-file-client.js";

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
