/** The drizzle/ migrations applied to a libSQL database at start-up, safely when instances start together. */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { drizzle } from "drizzle-orm/libsql";
import { migrate } from "drizzle-orm/libsql/migrator";

/**
 * The project's drizzle/ folder, found upwards from this module: it runs from src/runtime/host/
 * (tsx, tests) and from the bundle in dist/node/ (scripts/build.mjs), at different depths.
 */
export const MIGRATIONS_FOLDER = findUp(
  dirname(fileURLToPath(import.meta.url)),
  join("drizzle", "meta", "_journal.json"),
);

function findUp(from: string, marker: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, marker))) return join(dir, "drizzle");
    if (dirname(dir) === dir) throw new Error(`no ${marker} above ${from}`);
  }
}

/**
 * Instances started together on a fresh database race to migrate it: the loser's migration fails
 * ("table … already exists", or SQLITE_BUSY) and is rolled back. Retrying finds the winner's
 * migrations recorded and applies only what is still missing.
 */
export async function migrateShared(db: ReturnType<typeof drizzle>, attempts = 5) {
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
