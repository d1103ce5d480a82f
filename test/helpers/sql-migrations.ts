/** drizzle/*.sql applied in order, as `wrangler d1 migrations apply` does (migrations_dir = "drizzle"). */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@libsql/client";

/** Applies the migrations whose file names `until` accepts to the libSQL database at `url`; returns its client. */
export async function applyMigrations(url: string, until: (file: string) => boolean) {
  const client = createClient({ url });
  const files = (await readdir("drizzle"))
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .filter(until);
  for (const file of files) {
    for (const statement of (await readFile(join("drizzle", file), "utf8")).split("--> statement-breakpoint")) {
      if (statement.trim()) await client.execute(statement);
    }
  }
  return client;
}
