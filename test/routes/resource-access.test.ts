/**
 * GET /cms/v1.0/resourceAccess/{uid} (issue 40 §1): a resource's live lock or null (never the 404
 * queryResourceLock answers for an unlocked resource, which a page logs as an error) and what the
 * caller's roles and ownership allow, so the library offers only those actions. Real IdP keys,
 * the real app in-process; auth off too.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const roles = (...names: string[]) => ({ resource_access: { "cms-server": { roles: names } } });

const post = (app: TestApp, token: string | null, verb: string, body: unknown) =>
  app.fetch(app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { ...(token ? bearer(token) : {}), "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const create = async (app: TestApp, token: string | null, tenant = "acc") =>
  (await cmsClient(app, tenant, token ?? undefined).create({}, "access")).resourceUID;

const access = (app: TestApp, token: string | null, uid: string) =>
  app.fetch(app.url(`${API}/resourceAccess/${encodeURIComponent(uid)}`), { headers: token ? bearer(token) : {} });

async function accessOf(app: TestApp, token: string | null, uid: string) {
  const res = await access(app, token, uid);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as {
    resourceUID: string;
    lock: null | Record<string, unknown>;
    may: Record<string, boolean>;
  };
}

describe("resourceAccess, auth on", () => {
  let stack: AuthStack;
  const token: Record<string, string> = {};
  let uid: string;
  beforeAll(async () => {
    stack = await startAuthStack({}, { transport: "in-process" });
    token.owner = await stack.forge({ sub: "olga", ...roles("creator") });
    token.creator = await stack.forge({ sub: "carl", ...roles("creator") });
    token.consumer = await stack.forge({ sub: "cora", ...roles("consumer") });
    token.admin = await stack.forge({ sub: "root", ...roles("admin") });
    token.elsewhere = await stack.forge({ sub: "eve", ...roles("admin"), tenants: ["other"] });
    uid = await create(stack.app, token.owner as string);
  });
  afterAll(async () => stack?.close());

  it("an unlocked resource answers lock null, with what each role and owner may do", async () => {
    const may = async (who: string) => (await accessOf(stack.app, token[who] as string, uid)).may;
    expect(await accessOf(stack.app, token.owner as string, uid)).toEqual({
      resourceUID: uid,
      lock: null,
      may: { modify: true, purge: false },
    });
    expect(await may("creator")).toEqual({ modify: false, purge: false });
    expect(await may("consumer")).toEqual({ modify: false, purge: false });
    expect(await may("admin")).toEqual({ modify: true, purge: true });
  });

  it("a locked resource names its lock; only the holder sees the lockID", async () => {
    const locked = await post(stack.app, token.owner as string, "lockResourceDTO", {
      resourceUID: uid,
      author: "Olga",
    });
    expect(locked.status).toBe(200);
    const { lockID } = (await locked.json()) as { lockID: string };
    const mine = await accessOf(stack.app, token.owner as string, uid);
    expect(mine.lock).toMatchObject({ lockID, lockOwner: "Olga", uid });
    expect((await accessOf(stack.app, token.admin as string, uid)).lock).toMatchObject({
      lockID: null,
      lockOwner: "Olga",
    });
  });

  it("refuses another tenant's caller (403), an unknown resource (404), and no token (401)", async () => {
    await expectProblem(await access(stack.app, token.elsewhere as string, uid), 403, "FORBIDDEN");
    await expectProblem(await access(stack.app, token.admin as string, "nope-acc"), 404, "NOT_FOUND");
    await expectProblem(await access(stack.app, null, uid), 401, "UNAUTHENTICATED");
  });
});

describe("resourceAccess, auth off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({}, { transport: "in-process" });
  });
  afterAll(async () => app?.close());

  it("allows everything", async () => {
    const uid = await create(app, null);
    expect(await accessOf(app, null, uid)).toEqual({
      resourceUID: uid,
      lock: null,
      may: { modify: true, purge: true },
    });
  });
});
