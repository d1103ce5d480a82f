/**
 * prebuilt.ts: a statement built once with placeholders must be the very statement drizzle's
 * builder makes for the same values (text and parameters), on a real migrated libSQL file, and must
 * refuse what would bind values to the wrong `?`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Bindable, placeholders, prebuilt } from "../../src/metadata/prebuilt.js";
import { type TenantUsageRow, resources, tenantUsage } from "../../src/metadata/schema.js";
import { openDatabase } from "../../src/runtime/host/database.js";

let dir: string;
let db: Awaited<ReturnType<typeof openDatabase>>;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-prebuilt-"));
  db = await openDatabase({ CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const usage: TenantUsageRow = {
  tenantId: "t1",
  bytes: 10,
  resources: 1,
  ingressDay: 3,
  ingressBytes: 10,
  maxBytes: 0,
  maxResources: 5,
  maxIngressBytes: 0,
};
const usageInsert = (values: Bindable<TenantUsageRow>) =>
  db.db
    .insert(tenantUsage)
    .values(values)
    .onConflictDoUpdate({ target: tenantUsage.tenantId, set: { bytes: sql`${tenantUsage.bytes} + excluded.bytes` } });

describe("prebuilt", () => {
  it("binds values into the builder's own text, in the builder's order", () => {
    const statement = prebuilt<TenantUsageRow>(
      db.db,
      usageInsert(placeholders<TenantUsageRow>(Object.keys(usage) as (keyof TenantUsageRow)[])),
    );
    const built = statement(usage).getQuery();
    const { sql: text, params } = usageInsert(usage).toSQL();
    expect({ sql: built.sql, params: built.params }).toEqual({ sql: text, params });
    expect(built.params).toEqual([
      usage.tenantId,
      usage.bytes,
      usage.resources,
      usage.ingressDay,
      usage.ingressBytes,
      usage.maxBytes,
      usage.maxResources,
      usage.maxIngressBytes,
    ]);
  });

  it("runs in a batch with other queries and writes what the builder would", async () => {
    const statement = prebuilt<TenantUsageRow>(
      db.db,
      usageInsert(placeholders<TenantUsageRow>(Object.keys(usage) as (keyof TenantUsageRow)[])),
    );
    await db.db.batch([statement(usage), statement({ ...usage, bytes: 5 })]);
    expect(await db.db.select().from(tenantUsage)).toEqual([{ ...usage, bytes: 15 }]);
  });

  it("uses one name's value wherever the placeholder appears, and keeps the builder's constants", () => {
    const uid = sql.placeholder("uid");
    const statement = prebuilt<{ uid: string }>(
      db.db,
      db.db
        .select()
        .from(resources)
        .where(sql`${resources.uid} = ${uid} or ${resources.parentUid} = ${uid} or ${resources.size} > ${7}`),
    );
    expect(statement({ uid: "u-t" }).getQuery().params).toEqual(["u-t", "u-t", 7]);
  });

  it("refuses a missing value", () => {
    const statement = prebuilt<{ uid: string }>(
      db.db,
      db.db
        .select()
        .from(resources)
        .where(eq(resources.uid, sql.placeholder("uid"))),
    );
    expect(() => statement({} as { uid: string })).toThrow(/uid/);
  });

  it("refuses, where it is built, a text whose '?' are not all parameters", () => {
    const query = db.db
      .select()
      .from(resources)
      .where(sql`${resources.name} = 'why?' and ${resources.uid} = ${sql.placeholder("uid")}`);
    expect(() => prebuilt(db.db, query)).toThrow(/1 parameters but 2 "\?"/);
  });

  it("binds an undefined value as a parameter (refused by the client), never dropping it and shifting the rest", async () => {
    const statement = prebuilt<{ a: unknown; b: string }>(
      db.db,
      db.db
        .select()
        .from(resources)
        .where(sql`${resources.name} = ${sql.placeholder("a")} and ${resources.uid} = ${sql.placeholder("b")}`),
    );
    const query = statement({ a: undefined, b: "u-t" });
    expect(query.getQuery().params).toEqual([undefined, "u-t"]);
    await expect(query).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/undefined cannot be passed/) },
    });
  });
});
