/** Locks over HTTP: the anchor's resource and named lock APIs, persisted in the metadata store. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Client, cmsClient, expectProblem, useCmsApp } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

// Lock expiry is the app's clock (AppDeps["clock"]): the tests move it instead of sleeping.
const time = fakeClock();
const t = useCmsApp("locks", {}, { clock: time.clock, transport: "in-process" });

const MINUTE = 60_000;

describe("resource locks (lockResourceDTO, renewResourceDtoLock, unlockResourceDTO)", () => {
  it("locks for 30 minutes by default and answers the anchor's LockedResourceDTO fields", async () => {
    const created = await t.cms.create({ resourceName: "doc.txt" });
    const before = time.nowMs();
    const res = await t.cms.post("lockResourceDTO", {
      resourceUID: created.resourceUID,
      author: "Alice",
      resourceURI: null,
      resourcesList: null,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      "resourceUID",
      "author",
      "resourceURI",
      "resourcesList",
      "lockID",
      "lockExpirationDate",
      "resourceName",
    ]);
    expect(body).toMatchObject({
      resourceUID: created.resourceUID,
      author: "Alice",
      resourceURI: created.resourceURI,
      resourcesList: null,
      resourceName: "doc.txt",
    });
    expect(body.lockID).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.lockExpirationDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const expires = Date.parse(body.lockExpirationDate as string);
    expect(expires).toBeGreaterThanOrEqual(before + 30 * MINUTE);
    expect(expires).toBeLessThanOrEqual(time.nowMs() + 30 * MINUTE);
  });

  it("renew really extends the stored expiry (the anchor's renew changed a copy)", async () => {
    const { resourceUID } = await t.cms.create();
    const lock = await t.cms.lock(resourceUID, "Alice");
    time.advance(30);
    const res = await t.cms.post("renewResourceDtoLock", { ...lock });
    expect(res.status).toBe(200);
    const renewed = (await res.json()) as { lockID: string; lockExpirationDate: string };
    expect(renewed.lockID).toBe(lock.lockID);
    // Exactly the 30 ms the app's clock moved: real time passing does not count.
    expect(Date.parse(renewed.lockExpirationDate)).toBe(Date.parse(lock.lockExpirationDate) + 30);
    // The store kept it: the named-lock view of the same lock shows the new expiry.
    const query = await t.cms.post("queryResourceLock", { uid: resourceUID });
    expect(((await query.json()) as { lockExpiration: string }).lockExpiration).toBe(renewed.lockExpirationDate);
  });

  it("unlock frees the resource for another owner", async () => {
    const { resourceUID } = await t.cms.create();
    const lock = await t.cms.lock(resourceUID, "Alice");
    await expectProblem(await t.cms.post("lockResourceDTO", { resourceUID, author: "Bob" }), 423, "LOCKED");
    const unlocked = await t.cms.post("unlockResourceDTO", lock);
    expect(unlocked.status).toBe(204);
    expect(await unlocked.text()).toBe("");
    expect((await t.cms.lock(resourceUID, "Bob")).author).toBe("Bob");
  });
});

describe("named locks (lockResource, renewResourceLock, queryResourceLock, unlockResource)", () => {
  it("answers the anchor's LockDTO keys, with `uid` in lower case", async () => {
    const res = await t.cms.post("lockResource", { uid: "report-2025", lockOwner: "Carol" });
    expect(res.status).toBe(200);
    const lock = (await res.json()) as Record<string, string>;
    expect(Object.keys(lock)).toEqual(["lockID", "lockOwner", "lockExpiration", "uid"]);
    expect(lock).toMatchObject({ lockOwner: "Carol", uid: "report-2025" });
    await t.cms.post("unlockResource", lock);
  });

  it("honours a requested expiry, renews to a later one, and unlocks", async () => {
    const wanted = new Date(time.nowMs() + 5 * MINUTE).toISOString();
    const lock = (await (
      await t.cms.post("lockResource", { uid: "named-1", lockOwner: "Carol", lockExpiration: wanted })
    ).json()) as Record<string, string>;
    expect(lock.lockExpiration).toBe(wanted);
    const later = time.nowMs() + 60 * MINUTE;
    const renewed = await t.cms.post("renewResourceLock", { ...lock, lockExpiration: later });
    expect(renewed.status).toBe(200);
    expect(((await renewed.json()) as { lockExpiration: string }).lockExpiration).toBe(new Date(later).toISOString());
    expect((await t.cms.post("unlockResource", lock)).status).toBe(204);
    await expectProblem(await t.cms.post("queryResourceLock", { uid: "named-1" }), 404, "NOT_FOUND");
  });

  it("never shows the lockID to anyone but its authenticated holder (the anchor leaked it)", async () => {
    await t.cms.post("lockResource", { uid: "named-2", lockOwner: "Dan" });
    const res = await t.cms.post("queryResourceLock", { uid: "named-2" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ lockID: null, lockOwner: "Dan", uid: "named-2" });
  });

  it("shares one namespace with resource locks, as in the anchor", async () => {
    const { resourceUID } = await t.cms.create();
    await t.cms.post("lockResource", { uid: resourceUID, lockOwner: "Eve" });
    await expectProblem(await t.cms.post("lockResourceDTO", { resourceUID, author: "Frank" }), 423, "LOCKED");
  });
});

describe("expiry", () => {
  // Locks last a minute on this app, and only its clock moving ends them: real time never does here.
  const expiryTime = fakeClock();
  let shortLived: TestApp;
  let short: Client;
  beforeAll(async () => {
    shortLived = await startTestApp({ CMS_LOCK_TTL: "60" }, { clock: expiryTime.clock, transport: "in-process" });
    short = cmsClient(shortLived, "expiry");
  });
  afterAll(() => shortLived.close());
  afterEach(() => expect(shortLived.unhandledErrors()).toEqual([]));

  it("an expired lock never blocks: another owner takes it, and the old holder can no longer use it", async () => {
    const { resourceUID } = await short.create();
    const old = await short.lock(resourceUID, "Alice");
    expiryTime.advance(60_000);
    const fresh = await short.lock(resourceUID, "Bob");
    expect(fresh.lockID).not.toBe(old.lockID);
    await expectProblem(await short.post("renewResourceDtoLock", old), 423, "LOCKED");
    await expectProblem(await short.post("updateResource", { ...old, resourceAuthor: "Alice" }), 423, "LOCKED");
  });

  it("an expired lock is not reported by queryResourceLock (the anchor returned it)", async () => {
    await short.post("lockResource", {
      uid: "soon-gone",
      lockOwner: "Alice",
      lockExpiration: expiryTime.nowMs() + 30_000,
    });
    expiryTime.advance(29_999);
    expect((await short.post("queryResourceLock", { uid: "soon-gone" })).status).toBe(200);
    expiryTime.advance(1);
    await expectProblem(await short.post("queryResourceLock", { uid: "soon-gone" }), 404, "NOT_FOUND");
  });
});

describe("locks live in the metadata store", () => {
  it("hold across processes sharing the database, and survive one of them stopping", async () => {
    const shared = await mkdtemp(join(tmpdir(), "cms-shared-"));
    const env = { CMS_VOLUME: join(shared, "volume"), CMS_DATABASE_URL: `file:${join(shared, "cms.db")}` };
    const first = await startTestApp(env, { transport: "in-process" });
    const second = await startTestApp(env, { transport: "in-process" });
    try {
      const a = cmsClient(first, "shared");
      const b = cmsClient(second, "shared");
      const { resourceUID } = await a.create();
      const lock = await a.lock(resourceUID, "Alice");
      await expectProblem(await b.post("lockResourceDTO", { resourceUID, author: "Bob" }), 423, "LOCKED");
      expect(first.unhandledErrors()).toEqual([]);
      await first.close();
      await expectProblem(await b.post("lockResourceDTO", { resourceUID, author: "Bob" }), 423, "LOCKED");
      expect((await b.post("unlockResourceDTO", lock)).status).toBe(204);
      expect((await b.lock(resourceUID, "Bob")).author).toBe("Bob");
      expect(second.unhandledErrors()).toEqual([]);
    } finally {
      await second.close();
      await rm(shared, { recursive: true, force: true });
    }
  });

  it("lets exactly one of many concurrent lockers win", async () => {
    const { resourceUID } = await t.cms.create();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.cms.post("lockResourceDTO", { resourceUID, author: `racer-${i}` })),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(423)]);
    for (const r of answers) await r.body?.cancel();
  });
});
