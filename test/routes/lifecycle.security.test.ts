/**
 * With auth on (real dev IdP, real tokens): roles, ownership from the token subject, tenant
 * confinement and lock holders on every lifecycle, lock, package and upload endpoint.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, startAuthStack } from "../helpers/auth-stack.js";
import { base64, type Client, cmsClient, expectProblem, form, upload } from "../helpers/cms-client.js";

let stack: AuthStack;
const as: Record<string, Client> = {};
const tokens: Record<string, string> = {};

beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  for (const user of ["cms-admin", "cms-creator", "cms-consumer", "acme-creator", "no-roles"]) {
    tokens[user] = await stack.passwordToken(user);
    as[user] = cmsClient(stack.app, "acme", tokens[user]);
  }
});
afterAll(() => stack.close());
afterEach(() => expect(stack.app.unhandledErrors()).toEqual([]));

const client = (user: string) => as[user] as Client;

describe("ownership: the token subject, never a request field", () => {
  it("only the owner or an admin may lock, update and delete; others get 403", async () => {
    const own = await client("cms-creator").create({ resourceAuthor: "acme-creator" }); // the author field grants nothing
    const body = { resourceUID: own.resourceUID, author: "acme-creator" };
    await expectProblem(await client("acme-creator").post("lockResourceDTO", body), 403, "FORBIDDEN");
    await expectProblem(
      await client("acme-creator").post("lockResource", { uid: own.resourceUID, lockOwner: "x" }),
      403,
      "FORBIDDEN",
    );
    await expectProblem(await client("cms-consumer").post("lockResourceDTO", body), 403, "FORBIDDEN");
    await expectProblem(await client("no-roles").post("lockResourceDTO", body), 403, "FORBIDDEN");
    await expectProblem(await cmsClient(stack.app, "acme").post("lockResourceDTO", body), 401, "UNAUTHENTICATED");

    const lock = await client("cms-creator").lock(own.resourceUID, "Owner");
    const update = { ...lock, resourceBinary: base64("by the owner") };
    await expectProblem(await client("acme-creator").post("updateResource", update), 403, "FORBIDDEN");
    expect((await client("cms-creator").post("updateResource", update)).status).toBe(200);
  });

  it("a lockID is useless to anyone but its holder, even an admin (423), who may force-unlock instead", async () => {
    const own = await client("cms-creator").create();
    const lock = await client("cms-creator").lock(own.resourceUID, "Owner");
    await expectProblem(
      await client("cms-admin").post("updateResource", { ...lock, resourceAuthor: "admin" }),
      423,
      "LOCKED",
    );
    await expectProblem(await client("cms-admin").post("deleteResource", lock), 423, "LOCKED");
    // The holder sees its lockID in queryResourceLock; a reader does not.
    const mine = await client("cms-creator").post("queryResourceLock", { uid: own.resourceUID });
    expect(((await mine.json()) as { lockID: string }).lockID).toBe(lock.lockID);
    const theirs = await client("cms-consumer").post("queryResourceLock", { uid: own.resourceUID });
    expect(((await theirs.json()) as { lockID: string | null }).lockID).toBeNull();
    // Admin override: unlock without knowing the lockID, then lock and update as admin.
    expect((await client("cms-admin").post("unlockResourceDTO", { ...lock, lockID: "unknown" })).status).toBe(204);
    const adminLock = await client("cms-admin").lock(own.resourceUID, "Admin");
    expect((await client("cms-admin").post("updateResource", { ...adminLock, resourceAuthor: "admin" })).status).toBe(
      200,
    );
  });

  it("a creator cannot force-unlock someone else's lock", async () => {
    const own = await client("cms-admin").create();
    const lock = await client("cms-admin").lock(own.resourceUID);
    await expectProblem(
      await client("cms-creator").post("unlockResourceDTO", { ...lock, lockID: "x" }),
      403,
      "FORBIDDEN",
    );
    await expectProblem(
      await client("cms-creator").post("unlockResource", { uid: own.resourceUID, lockID: "x", lockOwner: "A" }),
      403,
      "FORBIDDEN",
    );
  });
});

describe("roles", () => {
  it("purge is admin only", async () => {
    const own = await client("cms-creator").create();
    await expectProblem(
      await client("cms-creator").post("purgeResource", { resourceUID: own.resourceUID }),
      403,
      "FORBIDDEN",
    );
    expect((await client("cms-admin").post("purgeResource", { resourceUID: own.resourceUID })).status).toBe(200);
  });

  it("creating (JSON or upload) needs creator; reading needs consumer", async () => {
    await expectProblem(
      await client("cms-consumer").post("createResource", {
        resourceAuthor: "a",
        resourceMediaType: "text/plain",
        resourceName: "x",
        resourceTenantId: "acme",
        resourceBinary: base64("x"),
      }),
      403,
      "FORBIDDEN",
    );
    const upForm = () =>
      form({ resourceAuthor: "a", resourceTenantId: "acme", resourceName: "u.txt" }, { bytes: new Uint8Array([1]) });
    await expectProblem(
      await upload(stack.app, upForm(), { authorization: `Bearer ${tokens["cms-consumer"]}` }),
      403,
      "FORBIDDEN",
    );
    await expectProblem(await upload(stack.app, upForm()), 401, "UNAUTHENTICATED");
    expect((await upload(stack.app, upForm(), { authorization: `Bearer ${tokens["acme-creator"]}` })).status).toBe(201);

    const created = await client("cms-creator").create();
    const reader = client("cms-consumer");
    expect((await reader.post("queryResource", { queryUID: created.resourceUID })).status).toBe(200);
    expect((await reader.get(`getRevisions/${created.resourceUID}`)).status).toBe(200);
    expect((await reader.get(`getRevisionData/${created.resourceUID}/1`)).status).toBe(200);
    expect((await reader.get(`getDataUuid/${created.resourceUID}`)).status).toBe(200);
    expect((await reader.post("getData", { resourceUID: created.resourceUID })).status).toBe(200);
    expect((await reader.get("listResources?resourceTenantId=acme")).status).toBe(200);
    for (const path of [
      `getRevisions/${created.resourceUID}`,
      `getDataUuid/${created.resourceUID}`,
      "listResources?resourceTenantId=acme",
    ]) {
      await expectProblem(await client("no-roles").get(path), 403, "FORBIDDEN");
      await expectProblem(await cmsClient(stack.app, "acme").get(path), 401, "UNAUTHENTICATED");
    }
  });
});

describe("tenant confinement (acme-creator may only touch tenant acme)", () => {
  it("refuses every endpoint on another tenant's resource with 403", async () => {
    const other = await cmsClient(stack.app, "t1", tokens["cms-admin"]).create();
    const acme = client("acme-creator");
    const uid = other.resourceUID;
    await expectProblem(await acme.post("queryResource", { queryUID: uid }), 403, "FORBIDDEN");
    await expectProblem(await acme.post("lockResourceDTO", { resourceUID: uid, author: "a" }), 403, "FORBIDDEN");
    await expectProblem(await acme.post("lockResource", { uid, lockOwner: "a" }), 403, "FORBIDDEN");
    await expectProblem(
      await acme.post("updateResource", { resourceUID: uid, author: "a", lockID: "l" }),
      403,
      "FORBIDDEN",
    );
    await expectProblem(await acme.post("getData", { resourceUID: uid }), 403, "FORBIDDEN");
    await expectProblem(await acme.get(`getRevisions/${uid}`), 403, "FORBIDDEN");
    await expectProblem(await acme.get("listResources?resourceTenantId=t1"), 403, "FORBIDDEN");
    await expectProblem(
      await acme.post("createResource", {
        resourceAuthor: "a",
        resourceMediaType: "text/plain",
        resourceName: "x",
        resourceTenantId: "t1",
        resourceBinary: base64("x"),
      }),
      403,
      "FORBIDDEN",
    );
    const up = form(
      { resourceAuthor: "a", resourceTenantId: "t1", resourceName: "u.txt" },
      { bytes: new Uint8Array([1]) },
    );
    await expectProblem(
      await upload(stack.app, up, { authorization: `Bearer ${tokens["acme-creator"]}` }),
      403,
      "FORBIDDEN",
    );
  });
});
