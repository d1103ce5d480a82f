/**
 * Every documented lock failure: 423 LOCKED when another live lock is in the way, 409 LOCK_NOT_HELD
 * when no live lock matches, 404 for unknown or deleted resources, 400 naming the bad field.
 */
import { describe, expect, it } from "vitest";
import { expectProblem, useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("lockerr", {}, { transport: "in-process" });

const UNKNOWN = "0000000000aaaaaaaaaaaaaaaaaaaa-lockerr";

describe("lock conflicts", () => {
  it("refuses a second lock by the same owner and a lock by another owner with 423", async () => {
    const { resourceUID } = await t.cms.create();
    await t.cms.lock(resourceUID, "Alice");
    const again = await expectProblem(
      await t.cms.post("lockResourceDTO", { resourceUID, author: "Alice" }),
      423,
      "LOCKED",
    );
    expect(again.detail).toMatch(/already locked by this owner/);
    const other = await expectProblem(
      await t.cms.post("lockResourceDTO", { resourceUID, author: "Bob" }),
      423,
      "LOCKED",
    );
    expect(other.detail).toMatch(/locked by another holder until \d{4}-/);
  });

  it("sends Retry-After with every 423, the seconds until the blocking lock expires", async () => {
    const { resourceUID } = await t.cms.create();
    const lock = await t.cms.lock(resourceUID, "Alice");
    const named = await t.cms.post("lockResource", { uid: "retry-after-name", lockOwner: "Alice" });
    expect(named.status).toBe(200);
    const refusals = [
      await t.cms.post("lockResourceDTO", { resourceUID, author: "Alice" }),
      await t.cms.post("lockResourceDTO", { resourceUID, author: "Bob" }),
      await t.cms.post("lockResource", { uid: "retry-after-name", lockOwner: "Bob" }),
      await t.cms.post("renewResourceDtoLock", { ...lock, author: "Mallory" }),
    ];
    for (const answer of refusals) {
      await expectProblem(answer.clone(), 423, "LOCKED");
      const seconds = Number(answer.headers.get("retry-after"));
      // The default lock TTL is 1800 s: the wait is positive and never longer than the lock's life.
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(1800);
    }
  });

  it.each([
    ["a wrong lockID", { lockID: "not-the-lock" }],
    ["a wrong author", { author: "Mallory" }],
  ])("refuses unlock and renew with %s (423) and never echoes the real lockID", async (_label, change) => {
    const { resourceUID } = await t.cms.create();
    const lock = await t.cms.lock(resourceUID, "Alice");
    for (const verb of ["unlockResourceDTO", "renewResourceDtoLock"]) {
      const p = await expectProblem(await t.cms.post(verb, { ...lock, ...change }), 423, "LOCKED");
      expect(JSON.stringify(p)).not.toContain(lock.lockID);
    }
    // The lock is intact.
    expect((await t.cms.post("unlockResourceDTO", lock)).status).toBe(204);
  });

  it("answers 409 LOCK_NOT_HELD to unlock or renew without any lock", async () => {
    const { resourceUID } = await t.cms.create();
    const fake = { resourceUID, author: "Alice", lockID: "nothing" };
    await expectProblem(await t.cms.post("unlockResourceDTO", fake), 409, "LOCK_NOT_HELD");
    await expectProblem(await t.cms.post("renewResourceDtoLock", fake), 409, "LOCK_NOT_HELD");
    await expectProblem(
      await t.cms.post("unlockResource", { uid: "never-locked", lockID: "x", lockOwner: "A" }),
      409,
      "LOCK_NOT_HELD",
    );
  });
});

describe("unknown and deleted resources", () => {
  it.each(["lockResourceDTO", "unlockResourceDTO", "renewResourceDtoLock"])(
    "%s answers 404 for an unknown or malformed UID",
    async (verb) => {
      for (const resourceUID of [UNKNOWN, "nonsense"]) {
        await expectProblem(await t.cms.post(verb, { resourceUID, author: "Alice", lockID: "x" }), 404, "NOT_FOUND");
      }
    },
  );

  it("cannot lock a deleted resource (the anchor could)", async () => {
    const { resourceUID } = await t.cms.create();
    const lock = await t.cms.lock(resourceUID, "Alice");
    expect((await t.cms.post("deleteResource", lock)).status).toBe(200);
    await expectProblem(await t.cms.post("lockResourceDTO", { resourceUID, author: "Alice" }), 404, "NOT_FOUND");
    await expectProblem(await t.cms.post("queryResourceLock", { uid: resourceUID }), 404, "NOT_FOUND");
  });
});

describe("validation", () => {
  it.each([
    ["lockResourceDTO", { author: "A" }, "/json/resourceUID"],
    ["lockResourceDTO", { resourceUID: "x" }, "/json/author"],
    ["lockResourceDTO", { resourceUID: "x", author: "" }, "/json/author"],
    ["unlockResourceDTO", { resourceUID: "x", author: "A" }, "/json/lockID"],
    ["lockResource", { UID: "x", lockOwner: "A" }, "/json/uid"],
    ["lockResource", { uid: "x" }, "/json/lockOwner"],
    ["lockResource", { uid: "x", lockOwner: "A", lockExpiration: "tomorrow" }, "/json/lockExpiration"],
    ["renewResourceLock", { uid: "x", lockOwner: "A" }, "/json/lockID"],
    ["queryResourceLock", {}, "/json/uid"],
  ])("%s with %j → 400 naming %s", async (verb, body, pointer) => {
    await expectProblem(await t.cms.post(verb, body), 400, "VALIDATION_FAILED", pointer);
  });

  it.each([
    ["in the past", () => Date.now() - 1000],
    ["beyond CMS_LOCK_MAX_TTL (8 h)", () => Date.now() + 9 * 3600_000],
  ])("refuses a requested expiry %s", async (_label, at) => {
    await expectProblem(
      await t.cms.post("lockResource", { uid: "expiry-check", lockOwner: "A", lockExpiration: at() }),
      400,
      "VALIDATION_FAILED",
      "/body/lockExpiration",
    );
  });

  it("answers 415 to a body that is not JSON", async () => {
    const res = await t.app.fetch(t.app.url("/cms/v1.0/lockResource"), {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    await expectProblem(res, 415, "UNSUPPORTED_MEDIA_TYPE");
  });
});
