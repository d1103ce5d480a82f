/**
 * Setup file of the workers project (vitest.workers.config.ts): each test file starts on an empty D1
 * database and an empty R2 bucket. The project runs its files in one workerd per worker (isolate:
 * false: a fresh runtime per file spent most of the project's time importing the app again), so the
 * storage a file leaves behind is emptied here rather than by starting another runtime.
 */
import { env } from "cloudflare:workers";
import { beforeAll } from "vitest";

/** What this file uses of the D1 and R2 bindings (the Workers types are not in the main tsconfig). */
interface Statement {
  run(): Promise<unknown>;
  all<T>(): Promise<{ results: T[] }>;
}
interface D1Database {
  prepare(sql: string): Statement;
  batch(statements: Statement[]): Promise<unknown>;
}
interface R2Bucket {
  list(options: { cursor?: string; limit?: number }): Promise<{
    objects: { key: string }[];
    truncated: boolean;
    cursor?: string;
  }>;
  delete(keys: string[]): Promise<void>;
}
interface Bindings {
  DB: D1Database;
  BLOBS: R2Bucket;
}

async function emptyD1(db: D1Database) {
  const { results } = await db
    .prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    )
    .all<{ name: string; sql: string | null }>();
  // Virtual tables (full-text search) first: dropping one drops its shadow tables with it.
  const virtual = results.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? ""));
  for (const { name } of virtual) await db.prepare(`DROP TABLE IF EXISTS "${name}"`).run();
  const statements = results
    .filter((t) => !virtual.includes(t))
    .map(({ name }) => db.prepare(`DROP TABLE IF EXISTS "${name}"`));
  // Foreign keys off for the drop, so the order of the tables does not matter.
  if (statements.length) await db.batch([db.prepare("PRAGMA defer_foreign_keys = ON"), ...statements]);
}

async function emptyR2(bucket: R2Bucket) {
  let cursor: string | undefined;
  do {
    const listed = await bucket.list({ cursor });
    if (listed.objects.length) await bucket.delete(listed.objects.map((o) => o.key));
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  const left = await bucket.list({ limit: 1 });
  if (left.objects.length) throw new Error("the bucket did not empty");
}

beforeAll(async () => {
  const { DB, BLOBS } = env as unknown as Bindings;
  await Promise.all([emptyD1(DB), emptyR2(BLOBS)]);
});
