/**
 * Issue 38's Performance section, at the store level (no HTTP): N resources in one tenant (default
 * 1 000 000), made by one INSERT … SELECT from a recursive CTE (the FTS5 triggers index them as
 * they go), then p50/p99 of: a term matching 100 of them, a prefix search, a folder page, the
 * folder tree, and a tag filter. Real libSQL file, the shipped migrations and SearchStore.
 *
 *   node --import tsx bench/search.ts [rows]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetadataStore } from "../src/metadata/metadata-store.js";
import type { SearchQuery } from "../src/metadata/search-store.js";
import { openDatabase } from "../src/runtime/host/database.js";
import { matchExpression, searchTerms } from "../src/lib/search-query.js";

const ROWS = Number(process.argv[2] ?? 1_000_000);
const RUNS = 200;
const dir = mkdtempSync(join(tmpdir(), "cms-search-bench-"));

async function main() {
  const { db, close } = await openDatabase({ CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
  const client = db.$client;
  await client.execute("INSERT INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)");
  const started = performance.now();
  // Every 10 000th row's title has "zebra" (100 rows at 1M); words w0…w9999 spread over the rest.
  await client.execute(`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1})
    INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key,
                           created_at, updated_at, title, description, tags, tag_keys, folder)
    SELECT printf('%010d-bench', i), printf('%010d', i), 'bench', printf('%010d-bench', i), 'f.txt',
           printf('item-%d.txt', i), 'A', 'text/plain', 1, 'h', 't/k', 1700000000000 + i, 1700000000000 + i,
           CASE WHEN i % ${Math.max(1, Math.floor(ROWS / 100))} = 0 THEN 'zebra crossing' ELSE printf('photo w%d', i % 10000) END,
           'a description of some length to index like a real one',
           printf('["t%d"]', i % 500), printf('["t%d"]', i % 500), printf('/f%d/', i % 1000)
    FROM n`);
  const insertSeconds = (performance.now() - started) / 1000;
  const store = createMetadataStore(db);
  const base: SearchQuery = {
    tenantId: "bench",
    tagKeys: [],
    tagMatches: [],
    recursive: false,
    sort: "-createdAt",
    limit: 21,
  };
  const cases: [string, () => Promise<unknown>][] = [
    [
      "term matching 100 (q=zebra)",
      () => store.search.search({ ...base, match: matchExpression(searchTerms("zebra")), sort: "relevance" }),
    ],
    [
      "prefix (q=w12*, ~11k hits)",
      () => store.search.search({ ...base, match: matchExpression(searchTerms("w12*")), sort: "relevance" }),
    ],
    [
      "prefix, newest first (q=w12*)",
      () => store.search.search({ ...base, match: matchExpression(searchTerms("w12*")) }),
    ],
    ["folder page (folder=/f7/)", () => store.search.search({ ...base, folder: "/f7/" })],
    ["tag filter (tag=t7)", () => store.search.search({ ...base, tagKeys: ["t7"], tagMatches: ['tags : "t7"'] })],
    ["folders (parent=/, 1000 folders)", () => store.search.folders("bench", "/")],
  ];
  console.log(`${ROWS} rows inserted (with FTS5 indexing) in ${insertSeconds.toFixed(1)} s`);
  for (const [name, run] of cases) {
    await run();
    const times: number[] = [];
    const runs = name.startsWith("folders") ? 20 : RUNS;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const at = (p: number) => (times[Math.min(times.length - 1, Math.floor(p * times.length))] as number).toFixed(2);
    console.log(`${name.padEnd(36)} p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  (${runs} runs)`);
  }
  await close();
}

main().finally(() => rmSync(dir, { recursive: true, force: true }));
