/**
 * The libSQL database of Node/Bun: a local file through our own client (WAL, synchronous=NORMAL,
 * commits made durable by a grouped fsync off the main thread), anything else through
 * @libsql/client; migrated before it is used. With `health`, every statement's outcome is reported
 * to it and an unusable database fails with DatabaseUnavailableError (metadata/database-health.ts).
 */
import { statSync } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Client } from "@libsql/client";
import * as drizzleCore from "drizzle-orm/libsql/driver-core";
import type { LibSQLDatabase } from "drizzle-orm/libsql/driver-core";
import { type Config, DEFAULT_DB_BUSY_TIMEOUT_MS } from "../../config.js";
import { type DatabaseHealth, withDatabaseHealth } from "../../metadata/database-health.js";
import { groupCommit, withDurableCommits } from "./durable-commits.js";
import { migrateShared } from "./migrations.js";
import { withQueuedWrites } from "./queued-writes.js";
import { createSqliteFileClient } from "./sqlite-file-client.js";

type DatabaseSettings = Pick<Config, "CMS_DATABASE_URL" | "CMS_DATABASE_AUTH_TOKEN"> &
  Partial<Pick<Config, "CMS_DB_BUSY_TIMEOUT_MS">>;

/**
 * The URL @libsql/client is given for a remote database: `libsql://` as WebSockets (`wss://`, or
 * `ws://` with `?tls=0`). @libsql/client 0.18 on Node sends `libsql://` over HTTP, one request per
 * statement; one WebSocket stream per client answered 2–3× the getData lookups per second.
 */
export function remoteClientUrl(url: string): string {
  if (!url.startsWith("libsql:")) return url;
  const parsed = new URL(url);
  const plain = parsed.searchParams.get("tls") === "0";
  parsed.searchParams.delete("tls");
  return `${plain ? "ws" : "wss"}:${parsed.href.slice("libsql:".length)}`;
}

/** A libSQL client for anything but a local file (loaded only here: @libsql/client and its remote protocols took ~90 ms of a cold start). */
async function remoteClient(url: string, authToken: string | undefined): Promise<Client> {
  const { createClient } = await import("@libsql/client");
  return createClient({ url: remoteClientUrl(url), authToken });
}

export async function openDatabase(config: DatabaseSettings, health?: DatabaseHealth) {
  const url = config.CMS_DATABASE_URL;
  const maxWaitMs = config.CMS_DB_BUSY_TIMEOUT_MS ?? DEFAULT_DB_BUSY_TIMEOUT_MS;
  if (!url.startsWith("file:") || url.includes(":memory:")) {
    const client = await remoteClient(url, config.CMS_DATABASE_AUTH_TOKEN);
    // One write at a time from this process, SQLITE_BUSY waited out (queued-writes.ts says why).
    return migrated(withQueuedWrites(client, maxWaitMs), health);
  }
  const file = resolve(url.slice("file:".length));
  await mkdir(dirname(file), { recursive: true });
  const client = createSqliteFileClient({ file, maxWaitMs });
  // WAL lets readers proceed during writes (switching to it takes the write lock, so it may wait).
  const { rows } = await client.execute("PRAGMA journal_mode = WAL");
  if (String(rows[0]?.[0]).toLowerCase() !== "wal") return migrated(client, health);
  // Commits are made durable off the main thread (see durable-commits.ts); NORMAL is only safe in WAL mode.
  await client.execute("PRAGMA synchronous = NORMAL");
  const wal = walSyncer(file);
  return migrated(withDurableCommits(client, groupCommit(wal.sync)), health, wal.close);
}

/**
 * CMS_DATABASE_READ_URL: a read replica of the database (same token), not migrated — it follows its
 * primary, which openDatabase migrates. Only read from (metadata/read-replica.ts).
 */
export async function openReadReplica(url: string, authToken: string | undefined) {
  const client = await remoteClient(url, authToken);
  return { db: drizzle(client), close: () => client.close() };
}

/**
 * drizzle's libSQL driver without its entry module, which imports @libsql/client's `createClient`
 * (for `drizzle(url)`) even when given a client. `construct` is what that entry calls with one; the
 * package exports the module, its typings leave the function out (drizzle-orm is pinned exactly).
 */
export const drizzle = (
  drizzleCore as unknown as { construct: (client: Client) => LibSQLDatabase & { $client: Client } }
).construct;

/** Watched outermost: a failed WAL sync (EIO) is the database's failure too. */
async function migrated(client: Client, health: DatabaseHealth | undefined, closeAlso?: () => Promise<void>) {
  const db = drizzle(health ? withDatabaseHealth(client, health) : client);
  await migrateShared(db);
  return {
    db,
    close: () => {
      client.close();
      void closeAlso?.();
    },
  };
}

async function fsyncFile(path: string) {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * fsyncs the database's WAL file (in libuv's thread pool), or the database file itself if there is
 * no WAL. The WAL is fsynced through a descriptor kept open: opening and closing it per commit group
 * were two more thread-pool round trips. The descriptor is used only while the path still names the
 * same file (a stat, no I/O): SQLite may delete the WAL (after checkpointing it into the synced
 * database file) and create a new one, which is then opened. A commit is always in the file the path
 * names at its sync, or already checkpointed.
 */
export function walSyncer(databaseFile: string) {
  const walFile = `${databaseFile}-wal`;
  let held: { handle: FileHandle; dev: number; ino: number } | null = null;
  const release = async () => {
    const old = held;
    held = null;
    await old?.handle.close().catch(() => {});
  };
  let running: Promise<void> | null = null;
  const sync = async () => {
    const now = statSync(walFile, { throwIfNoEntry: false });
    if (!now) {
      await release();
      return fsyncFile(databaseFile);
    }
    if (!held || held.dev !== now.dev || held.ino !== now.ino) {
      await release();
      const handle = await open(walFile, "r");
      // Labelled by what was opened, not by the stat: a held descriptor keeps its inode from being reused.
      const opened = await handle.stat().catch(async (err: unknown) => {
        await handle.close().catch(() => {});
        throw err;
      });
      held = { handle, dev: opened.dev, ino: opened.ino };
    }
    await held.handle.sync();
  };
  return {
    // groupCommit runs one sync at a time, so `held` never changes under a running one.
    sync: () => {
      running = sync();
      return running;
    },
    /** After the running sync, if any: its descriptor is not closed under it. */
    close: async () => {
      await running?.catch(() => {});
      await release();
    },
  };
}
