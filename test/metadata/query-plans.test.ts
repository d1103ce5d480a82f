/**
 * Every statement the metadata store and the blob ledger run, checked with SQLite's EXPLAIN QUERY
 * PLAN: rows are found through an index on what the statement names (a key, a uid, a context), never
 * by walking a table or an index over a column nearly every row shares. Such a statement costs time in
 * proportion to the database's size, on every create: it passes every functional test on a small
 * database and slows a large one down, request by request.
 */
import type { Client, InStatement } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMetadataStore, type MetadataStore } from "../../src/metadata/metadata-store.js";
import type { NewResourceRow } from "../../src/metadata/schema.js";
import { drizzle } from "../../src/runtime/host/database.js";
import { resourceRow } from "../helpers/resource-row.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";

let temp: TempStore;
let client: Client;
/** Every statement run through `store`, with its arguments. */
const statements: InStatement[] = [];
let store: MetadataStore;

/** The client, recording each statement it runs (alone, in a batch or in a transaction). */
function recording(inner: Client): Client {
  const record = (s: InStatement) => statements.push(typeof s === "string" ? { sql: s, args: [] } : s);
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "execute") return (s: InStatement) => (record(s), target.execute(s));
      if (prop === "batch")
        return (list: InStatement[], mode?: "write" | "read" | "deferred") => (
          list.forEach(record), target.batch(list, mode)
        );
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

beforeAll(async () => {
  temp = await tempStore("plans");
  const opened = await temp.open();
  client = opened.db.$client;
  store = createMetadataStore(drizzle(recording(client)));
});
afterAll(() => temp.close());

const row = (n: number, over: Partial<NewResourceRow> = {}): NewResourceRow => {
  return resourceRow(`id${n}-t`, { blobKey: `t/k${n}`, createdAt: 1000 + n, updatedAt: 1000 + n, ...over });
};
const charge = {
  tenantId: "t",
  bytes: 1,
  resources: 1,
  ingressBytes: 1,
  day: 1,
  limits: { bytes: 0, resources: 0, ingressBytesPerDay: 0 },
};

/**
 * A table walked row by row (json_each's few values and constant rows are not tables; a partial
 * index holds only the rows it is for, so walking one is not walking the table). The webhook
 * subscriptions are a handful of admin-registered rows, each change's events are matched against all.
 */
const fullScan = (partialIndexes: string[]) => (line: string) =>
  /^SCAN (?!json_each|\d+ CONSTANT ROWS|\(subquery|webhook_subscriptions$)/.test(line) &&
  !partialIndexes.some((name) => line.endsWith(`USING INDEX ${name}`));
/**
 * An index searched by "is null" on a state column nearly every row has null (no doom, no pending
 * look, not deleted): a walk over almost the whole table that looks like an index search.
 */
const NULL_STATE_SEARCH = /\((doomed_at|check_after|deleted_at)=\?/;

async function planOf(statement: InStatement): Promise<string[]> {
  const { sql, args } = typeof statement === "string" ? { sql: statement, args: [] } : statement;
  const { rows } = await client.execute({ sql: `EXPLAIN QUERY PLAN ${sql}`, args });
  return rows.map((r) => String(r.detail));
}

describe("query plans", () => {
  it("find the rows a statement names by index, in every store and ledger statement", async () => {
    const { ledger, locks } = store;
    // A create, as the services run it: reserve, then the rows with the tenant's charge.
    expect(await ledger.reserve("t/k1", 1000, 60_000)).toBeNull();
    await store.insert(row(1), charge);
    await ledger.reserve("t/k2", 1000, 60_000);
    const zip = row(2, { path: "p.zip" });
    await ledger.reserve("t/k3", 1000, 60_000);
    await store.insertAll([zip, row(3, { context: zip.uid, parentUid: zip.uid, path: "f" })], charge);
    // Reads.
    await store.findByUid("id1-t");
    await store.findByUri("id1-t", "a.txt");
    await store.children(zip.uid);
    await store.list({ tenantId: "t", limit: 10 });
    await store.list({
      tenantId: "t",
      author: "A",
      mediaType: "text/plain",
      namePrefix: "a",
      createdFrom: 0,
      createdBefore: 9999,
      after: { createdAt: 1000, uid: "id0-t" },
      limit: 10,
    });
    await store.list({ tenantId: "t", parentUid: zip.uid, limit: 10 });
    await store.list({
      tenantId: "t",
      mediaType: "image/*",
      after: { createdAt: 1000, uid: "id9-t" },
      newestFirst: true,
      limit: 10,
    });
    await store.usage("t");
    await store.revisionCount("t");
    await store.revisions("id1-t");
    await store.revision("id1-t", 1);
    await store.countByBlobKey("t/k1");
    // Changes under a lock.
    const lock = { lockId: "L", owner: "A", holder: null };
    await locks.acquire({ name: "id1-t", ...lock, expiresAt: 10_000, now: 1000 });
    await locks.find("id1-t", 1000);
    await locks.renew("id1-t", lock, 20_000, 1000);
    await ledger.reserve("t/k4", 1000, 60_000);
    await store.update(
      { uid: "id1-t", expectedRevision: 1, lock, actor: null, now: 2000 },
      { blobKey: "t/k4", size: 2, sha256: "s2" },
      charge,
    );
    await store.softDelete({ uid: "id1-t", expectedRevision: 2, lock, actor: null, now: 3000 });
    await locks.release("id1-t", lock);
    await store.purge(zip.uid, 4000);
    // The collector's side.
    await ledger.reserve("t/k5", 1000, 60_000);
    await ledger.release("t/k5", 1000);
    await ledger.due(100_000, 10);
    await ledger.doom("t/k5", 100_000, 50_000);
    await ledger.redoom("t/k5", 100_000, 100_001);
    await ledger.staleDooms(200_000, 10);
    await ledger.forget("t/k5", 100_001);
    await ledger.postpone("t/k4", 60_000);
    await ledger.unknown(["t/k4", "t/k6"]);
    await ledger.find("t/k6");
    await store.adoptLegacyOwners("https://issuer.example");
    await store.ping();
    await store.deploymentId();
    // Resumable uploads.
    const { tusUploads } = store;
    const reservation = {
      tenantId: "t",
      bytes: 10,
      resources: 0,
      ingressBytes: 0,
      day: 0,
      limits: { bytes: 0, resources: 0, ingressBytesPerDay: 0 },
    };
    await tusUploads.create(
      { id: "up1", tenantId: "t", fields: "{}", length: 10, createdAt: 1000, expiresAt: 5000 },
      reservation,
    );
    await tusUploads.find("up1");
    await tusUploads.unfinished("t", 1000);
    await tusUploads.advance("up1", 0, 10, [{ key: "t/p1", size: 10 }], 1000, 6000);
    await tusUploads.claim("up1", 1000, 6000);
    await tusUploads.unclaim("up1");
    await tusUploads.expired(10_000, 10);
    await tusUploads.expire("up1", 10_000);
    await tusUploads.terminate("up1");
    await tusUploads.abandon("up1");
    // The webhook pump's poll with nothing due: its read only (webhook-store.ts).
    await store.webhooks.claim(1000, 5000, 10, 2);

    const plans = new Map<string, string[]>();
    for (const s of statements) {
      const sql = typeof s === "string" ? s : s.sql;
      if (!plans.has(sql)) plans.set(sql, await planOf(s));
    }
    expect(plans.size).toBeGreaterThan(30); // the workload above reached the statements
    const partial = (
      await client.execute("select name from sqlite_master where type = 'index' and sql like '% WHERE %'")
    ).rows.map((r) => String(r.name));
    expect(partial).toContain("resources_legacy_owner_idx");
    const isFullScan = fullScan(partial);
    const walks = [...plans].filter(([, plan]) =>
      plan.some((line) => isFullScan(line) || NULL_STATE_SEARCH.test(line)),
    );
    expect(walks.map(([sql, plan]) => `${sql}\n    ${plan.join("\n    ")}`)).toEqual([]);
  });
});
