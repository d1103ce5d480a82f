// The metadata store suite on a real libSQL server (sqld 0.24.32, test/helpers/sqld.ts), the
// several-instances deployment: over Hrana-over-HTTP (http://, each statement a request) and
// Hrana-over-WebSockets (ws://, one connection). sqld serves one database, so a fresh database is a
// pooled sqld emptied of every table (a new sqld per database took twice as long).
import { createClient } from "@libsql/client";
import { afterAll } from "vitest";
import { type Sqld, startSqld } from "../helpers/sqld.js";
import { describeMetadataStore } from "./metadata-store.suite.js";

const pool: Sqld[] = [];
let used = 0;
afterAll(() => Promise.all(pool.map((sqld) => sqld.close())));

async function emptied(sqld: Sqld): Promise<Sqld> {
  const client = createClient({ url: sqld.url });
  const dropAll = async (which: string) => {
    const { rows } = await client.execute(
      `select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and ${which}`,
    );
    if (rows.length > 0)
      await client.batch(
        rows.map((r) => `drop table "${String(r.name)}"`),
        "write",
      );
  };
  try {
    // Virtual tables first: dropping one (FTS5's resources_fts) drops its shadow tables with it.
    await dropAll("sql like 'CREATE VIRTUAL TABLE%'");
    await dropAll("1");
  } finally {
    client.close();
  }
  return sqld;
}

for (const scheme of ["http", "ws"] as const) {
  describeMetadataStore({
    name: `sqld over ${scheme}://`,
    fresh: async () => {
      if (used === pool.length) pool.push(await startSqld());
      const sqld = await emptied(pool[used++]!);
      return scheme === "http" ? sqld.url : sqld.wsUrl;
    },
    cleanup: async () => {
      used = 0;
    },
  });
}
