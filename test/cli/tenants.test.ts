/**
 * `cms tenants` (issue 40 §2), run as a child process against the real server with auth on: an
 * admin's list, --json, a confined token's own tenants, a refusal as one line; and with auth off.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, startAuthStack } from "../helpers/auth-stack.js";
import { cmsClient } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { runCms } from "./run-cms.js";

const roles = (...names: string[]) => ({ resource_access: { "cms-server": { roles: names } } });

const create = (app: TestApp, token: string | null, tenant: string, content: string) =>
  cmsClient(app, tenant, token ?? undefined).create({}, content);

describe("cms tenants, auth on", () => {
  let stack: AuthStack;
  let admin: string;
  const cms = (token: string, ...args: string[]) =>
    runCms(["tenants", ...args], { CMS_URL: stack.app.baseUrl, CMS_TOKEN: token }, stack.app.dir);
  beforeAll(async () => {
    stack = await startAuthStack();
    admin = await stack.forge({ sub: "root", ...roles("admin") });
    await create(stack.app, admin, "acme", "12345");
    await create(stack.app, admin, "beta", "12");
  });
  afterAll(async () => stack?.close());

  it("lists every tenant for an admin, tab-separated when piped, the API's JSON with --json", async () => {
    const [plain, json] = await Promise.all([cms(admin), cms(admin, "--json")]);
    expect(plain).toEqual({ code: 0, stdout: "acme\t1\t5\nbeta\t1\t2\n", stderr: "" });
    expect(JSON.parse(json.stdout)).toEqual({
      tenants: [
        { resourceTenantId: "acme", resources: 1, bytes: 5 },
        { resourceTenantId: "beta", resources: 1, bytes: 2 },
      ],
    });
  });

  it("a confined token's own tenants; an unconfined creator's refusal in one line, exit 1", async () => {
    const confined = await stack.forge({ sub: "cid", ...roles("consumer"), tenants: ["beta", "gamma"] });
    expect((await cms(confined)).stdout).toBe("beta\t1\t2\ngamma\t0\t0\n");
    const refused = await cms(await stack.forge({ sub: "cat", ...roles("creator") }));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^cms: 403 FORBIDDEN: the tenant list is shown to admins, or to callers confined to tenants\n$/,
    );
  });
});

describe("cms tenants, auth off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ CMS_LOG_LEVEL: "warn" });
  });
  afterAll(async () => app?.close());

  it("lists every tenant, (none) before the first write", async () => {
    const env = { CMS_URL: app.baseUrl };
    expect((await runCms(["tenants"], env, app.dir)).stdout).toBe("(none)\n");
    await create(app, null, "solo", "abc");
    expect((await runCms(["tenants"], env, app.dir)).stdout).toBe("solo\t1\t3\n");
  });
});
