/**
 * "Try it out" of the lifecycle and lock operations in real Chromium on the explorer's defaults
 * (explorer-try-it-harness.ts says how): a resource's lock taken, renewed and given back, the
 * resource updated and its revisions read, another deleted and purged, and a generic named lock.
 * The resources and the lock deleteResource needs are made through the API; only ids are typed.
 */
import { expect, it } from "vitest";
import { describeTryIt } from "./explorer-try-it-harness.js";

const AUTHOR = "explorer";

describeTryIt("lifecycle", (explorer) => {
  it("locks a resource, renews the lock, updates the resource and unlocks it", async () => {
    const { expectTry, create } = explorer();
    const resourceUID = await create("notes.txt", "text/plain", "first words");
    const locked = await expectTry("lockResourceDTO", { json: { resourceUID, author: AUTHOR } }, 200);
    const lock = { resourceUID, author: AUTHOR, lockID: locked.lockID as string };
    expect(lock.lockID).toBeTruthy();
    await expectTry("renewResourceDtoLock", { json: lock }, 200);
    await expectTry("updateResource", { json: lock }, 200);
    await expectTry("unlockResourceDTO", { json: lock }, 204);
  });

  it("reads a resource's revisions and a revision's bytes (GET and HEAD)", async () => {
    const { expectTry, tryIt, create } = explorer();
    const resourceUID = await create("history.txt", "text/plain", "revision one");
    const list = await expectTry("getRevisions", { params: { resourceUID } }, 200);
    expect(list.revisions).toHaveLength(1);
    // The revision number starts as its example (1): only the id is typed.
    const data = await tryIt("getRevisionData", { params: { resourceUID } });
    expect([data.status, data.body]).toEqual([200, "revision one"]);
    await expectTry("getRevisionDataHead", { params: { resourceUID } }, 200);
  });

  it("deletes a locked resource, then purges it", async () => {
    const { expectTry, create, post } = explorer();
    const resourceUID = await create("doomed.txt", "text/plain", "not for long");
    const { lockID } = await post("/cms/v1.0/lockResourceDTO", { resourceUID, author: AUTHOR }, 200);
    await expectTry("deleteResource", { json: { resourceUID, author: AUTHOR, lockID } }, 200);
    const purged = await expectTry("purgeResource", { json: { resourceUID } }, 200);
    expect(purged.purged).toContain(resourceUID);
  });

  it("takes a named lock, queries, renews and releases it", async () => {
    const { expectTry } = explorer();
    const uid = "explorer-named-lock";
    const taken = await expectTry("lockResource", { json: { uid, lockOwner: AUTHOR } }, 200);
    const lock = { uid, lockOwner: AUTHOR, lockID: taken.lockID as string };
    expect(lock.lockID).toBeTruthy();
    await expectTry("queryResourceLock", { json: { uid } }, 200);
    await expectTry("renewResourceLock", { json: lock }, 200);
    await expectTry("unlockResource", { json: lock }, 204);
  });
});
