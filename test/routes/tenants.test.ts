/**
 * GET /cms/v1.0/tenants (issue 40 §2): an admin sees every tenant with its resource count and stored
 * bytes, a confined token its own tenants (untouched ones at zero), anyone else 403; with auth off,
 * every tenant. Real IdP keys, the real app in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const roles = (...names: string[]) => ({ resource_access: { "cms-server": { roles: names } } });

/** One resource of `content` in `tenant` (inline createResource). */
const create = (app: TestApp, token: string | null, tenant: string, content: string) =>
  cmsClient(app, tenant, token ?? undefined).create({}, content);

const tenants = (app: TestApp, token: string | null) =>
  app.fetch(app.url(`${API}/tenants`), { headers: token ? bearer(token) : {} });

async function listed(app: TestApp, token: string | null) {
  const res = await tenants(app, token);
  expect(res.status, await res.clone().text()).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  return ((await res.json()) as { tenants: unknown[] }).tenants;
}

describe("GET tenants, auth on", () => {
  let stack: AuthStack;
  const token: Record<string, string> = {};
  beforeAll(async () => {
    stack = await startAuthStack({}, { transport: "in-process" });
    token.admin = await stack.forge({ sub: "root", ...roles("admin") });
    token.creator = await stack.forge({ sub: "cat", ...roles("creator") });
    token.consumer = await stack.forge({ sub: "con", ...roles("consumer") });
    token.confined = await stack.forge({ sub: "cara", ...roles("consumer"), tenants: ["zeta", "alpha", "empty"] });
    token.confinedAdmin = await stack.forge({ sub: "ada", ...roles("admin"), tenants: ["zeta"] });
    await create(stack.app, token.admin, "alpha", "12345");
    await create(stack.app, token.admin, "alpha", "123");
    await create(stack.app, token.admin, "zeta", "1");
    await create(stack.app, token.admin, "other", "12");
  });
  afterAll(async () => stack?.close());

  it("an admin without a tenant claim sees every tenant with its resources and bytes", async () => {
    expect(await listed(stack.app, token.admin as string)).toEqual([
      { resourceTenantId: "alpha", resources: 2, bytes: 8 },
      { resourceTenantId: "other", resources: 1, bytes: 2 },
      { resourceTenantId: "zeta", resources: 1, bytes: 1 },
    ]);
  });

  it("a confined token sees its own tenants only, those without resources at zero; a confined admin too", async () => {
    expect(await listed(stack.app, token.confined as string)).toEqual([
      { resourceTenantId: "alpha", resources: 2, bytes: 8 },
      { resourceTenantId: "empty", resources: 0, bytes: 0 },
      { resourceTenantId: "zeta", resources: 1, bytes: 1 },
    ]);
    expect(await listed(stack.app, token.confinedAdmin as string)).toEqual([
      { resourceTenantId: "zeta", resources: 1, bytes: 1 },
    ]);
  });

  it("refuses unconfined non-admins (403) and callers without a token (401), as problems", async () => {
    for (const who of ["creator", "consumer"]) {
      const problem = await expectProblem(await tenants(stack.app, token[who] as string), 403, "FORBIDDEN");
      expect(problem.detail).toMatch(/admins, or to callers confined to tenants/);
    }
    const noRoles = await stack.forge({ sub: "nobody", ...roles() });
    await expectProblem(await tenants(stack.app, noRoles), 403, "FORBIDDEN");
    await expectProblem(await tenants(stack.app, null), 401, "UNAUTHENTICATED");
  });
});

describe("GET tenants, auth off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({}, { transport: "in-process" });
    await create(app, null, "beta", "bb");
    await create(app, null, "alpha", "a");
  });
  afterAll(async () => app?.close());

  it("lists every tenant", async () => {
    expect(await listed(app, null)).toEqual([
      { resourceTenantId: "alpha", resources: 1, bytes: 1 },
      { resourceTenantId: "beta", resources: 1, bytes: 2 },
    ]);
  });
});
