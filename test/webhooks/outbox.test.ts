/**
 * The outbox on a real migrated libSQL file: every change writes its events in its own batch, one
 * per matching subscription; a change that does not apply (wrong revision, lock held by another)
 * writes none; a subscription's event and tenant filters hold.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import type { MetadataStore } from "../../src/metadata/metadata-store.js";
import { resourceRow } from "../helpers/resource-row.js";
import { type TempStore, tempStore } from "../helpers/temp-store.js";
import { UNSET_DESCRIPTION } from "../helpers/descriptions.js";
import { holdWriteLock } from "../helpers/write-lock-holder.js";

let temp: TempStore;
let store: MetadataStore;

beforeEach(async () => {
  temp = await tempStore("outbox");
  store = await temp.store();
});
afterEach(() => temp.close());

const subscription = (id: string, events: string[] = [], tenants: string[] = []) =>
  store.webhooks.addSubscription({
    id,
    url: "http://127.0.0.1:9/hook",
    secret: "whsec_AAAA",
    events: JSON.stringify(events),
    tenants: JSON.stringify(tenants),
    createdAt: 1,
  });

const types = async (id: string) => (await store.webhooks.deliveries(id, 100)).reverse().map((d) => d.type);

it("records one event per change and matching subscription, in the change's batch, none for a change that did not apply", async () => {
  await subscription("all");
  await subscription("deletes", ["resource.deleted"]);
  await subscription("other-tenant", [], ["other"]);
  const row = await store.insert(resourceRow("abc-t", { blobKey: "k1", owner: "alice" }));
  const lock = { lockId: "L", owner: "o", holder: "h" };
  expect((await store.locks.acquire({ name: row.uid, ...lock, expiresAt: 9000, now: 1100 })).acquired).toBe(true);
  // Another holder cannot take it: no second locked event.
  expect(
    (await store.locks.acquire({ name: row.uid, lockId: "M", owner: "o", holder: "x", expiresAt: 9000, now: 1150 }))
      .acquired,
  ).toBe(false);
  const change = { uid: row.uid, lock, actor: "bob", now: 1200 };
  expect(await store.update({ ...change, expectedRevision: 5 }, { author: "B" })).toBeNull();
  expect(await store.update({ ...change, expectedRevision: 1 }, { author: "B" })).not.toBeNull();
  expect(await store.locks.release(row.uid, { lockId: "nope", owner: "o", holder: "h" }, 1250)).toBeNull();
  expect(await store.locks.release(row.uid, lock, 1300)).not.toBeNull();
  await store.locks.acquire({ name: row.uid, ...lock, expiresAt: 9000, now: 1400 });
  expect(await store.softDelete({ ...change, expectedRevision: 2, now: 1500 })).not.toBeNull();
  expect(await store.purge(row.uid, 1600)).not.toBeNull();
  // A lock on a name that is no resource tells nobody.
  await store.locks.acquire({ name: "generic", ...lock, expiresAt: 9000, now: 1700 });

  expect(await types("all")).toEqual([
    "resource.created",
    "resource.locked",
    "resource.updated",
    "resource.unlocked",
    "resource.locked",
    "resource.deleted",
    "resource.purged",
  ]);
  expect(await types("deletes")).toEqual(["resource.deleted"]);
  expect(await types("other-tenant")).toEqual([]);
  const [updated] = (await store.webhooks.deliveries("all", 100)).filter((d) => d.type === "resource.updated");
  expect(updated?.id).toMatch(/^msg_[0-9a-f]{32}$/);
  expect(JSON.parse(updated?.payload ?? "")).toEqual({
    type: "resource.updated",
    timestamp: new Date(1200).toISOString(),
    data: {
      resourceUID: "abc-t",
      resourceURI: "abc-t/a.txt",
      resourceTenantId: "t",
      sha256: "s",
      size: 1,
      mediaType: "text/plain",
      revision: 2,
      ...UNSET_DESCRIPTION, // issue 38
      actor: "bob",
    },
  });
});

it("claims per subscription: each at most its cap of live claims, taking turns, a resource's events in order", async () => {
  await subscription("slow");
  await subscription("fast");
  for (let i = 0; i < 4; i++) await store.insert(resourceRow(`r${i}-t`, { blobKey: `k${i}`, owner: "alice" }));
  // A second event of r0: never claimed while its first is pending.
  const lock = { lockId: "L", owner: "o", holder: "h" };
  await store.locks.acquire({ name: "r0-t", ...lock, expiresAt: 9e12, now: 2000 });
  const { webhooks } = store;
  const now = 10_000;
  const first = await webhooks.claim(now, 5_000, 10, 2);
  // Turns: each subscription's oldest, then each one's next; two per subscription at most.
  expect(first.map((d) => `${d.subscriptionId} ${d.resourceUid}`)).toEqual([
    "slow r0-t",
    "fast r0-t",
    "slow r1-t",
    "fast r1-t",
  ]);
  // Every subscription is at its cap while those claims live, whoever claims.
  expect(await webhooks.claim(now + 1, 5_000, 10, 2)).toEqual([]);
  // A delivery done frees its subscription's slot, for that subscription only.
  const fastR0 = first[1] as (typeof first)[number];
  const done = { claimedUntil: fastR0.claimedUntil ?? 0, delivered: true, statusCode: 204, error: null, now };
  expect(await webhooks.complete(fastR0.seq, { ...done, retryAt: null })).toBe(true);
  const next = await webhooks.claim(now + 2, 5_000, 10, 2);
  // fast's r0 lock event is next in r0's order, but r2 is older in the outbox: the oldest goes first.
  expect(next.map((d) => `${d.subscriptionId} ${d.resourceUid} ${d.type}`)).toEqual(["fast r2-t resource.created"]);
  // A claim given back (a stopping instance) is due again at once, its attempts unchanged.
  const slowR1 = first[2] as (typeof first)[number];
  await webhooks.release(slowR1.seq, slowR1.claimedUntil ?? 0);
  const again = await webhooks.claim(now + 3, 5_000, 10, 2);
  expect(again.map((d) => [d.seq, d.attempts])).toEqual([[slowR1.seq, 0]]);
  // When a lease lapses its slot is free again: the slow subscription's next ones go.
  const later = await webhooks.claim(now + 5_001, 5_000, 10, 2);
  expect(later.map((d) => `${d.subscriptionId} ${d.resourceUid}`)).toContain("slow r0-t");
  // In order per resource: r0's lock event goes to fast (its created one was delivered), never to
  // slow while slow's created one is pending, however large the cap.
  const rest = await webhooks.claim(now + 5_002, 5_000, 100, 100);
  const locked = [...next, ...later, ...rest].filter((d) => d.type === "resource.locked");
  expect(locked.map((d) => d.subscriptionId)).toEqual(["fast"]);
});

it("polls for due deliveries as a read: while another process holds the write lock, an idle poll answers at once", async () => {
  await subscription("all");
  await store.insert(resourceRow("due-t", { blobKey: "k1", owner: "alice" }));
  const [delivery] = await store.webhooks.deliveries("all", 10);
  const rival = await holdWriteLock(temp.file());
  let released = false;
  try {
    // Before its first attempt is due: nothing to claim, and no write waited for the rival's lock
    // (a claim that took the lock would wait CMS_DB_BUSY_TIMEOUT_MS, then fail as busy).
    expect(await store.webhooks.claim(delivery!.nextAttemptAt - 1, 5_000, 10, 2)).toEqual([]);
    // Due: the claim is a write, and gets its row once the rival has committed.
    const claimed = store.webhooks.claim(delivery!.nextAttemptAt, 5_000, 10, 2);
    released = true;
    await rival.release();
    expect((await claimed).map((d) => d.id)).toEqual([delivery!.id]);
  } finally {
    if (!released) await rival.release();
  }
});
