/**
 * Roles and tenants on the issue-15 endpoints, with the real dev IdP: the usage document (unconfined
 * admins, or callers confined to that tenant) and tus uploads (creator role, tenant rules, only the creator or
 * an admin continues an upload).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API } from "../helpers/cms-client.js";

let stack: AuthStack;
const tokens: Record<string, string> = {};
beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  for (const user of ["cms-admin", "cms-creator", "cms-consumer", "acme-creator", "acme-admin"])
    tokens[user] = await stack.passwordToken(user);
});
afterAll(() => stack?.close());

const as = (user: string | null): Record<string, string> => (user ? bearer(tokens[user] as string) : {});
const TUS = { "tus-resumable": "1.0.0" };
const meta = (tenant: string) => `tenant ${btoa(tenant)},filename ${btoa("s.bin")},author ${btoa("S")}`;

describe("usage", () => {
  it.each([
    ["cms-admin", "acme", 200],
    ["cms-admin", "other", 200],
    ["acme-creator", "acme", 200],
    ["acme-creator", "other", 403],
    // Being an admin does not lift a token's confinement (issue 41 item 6).
    ["acme-admin", "acme", 200],
    ["acme-admin", "other", 403],
    ["cms-creator", "acme", 403],
    ["cms-consumer", "acme", 403],
    [null, "acme", 401],
  ] as const)("%s reading %s's usage → %i", async (user, tenant, status) => {
    const res = await stack.app.fetch(stack.app.url(`${API}/usage?resourceTenantId=${tenant}`), { headers: as(user) });
    expect(res.status).toBe(status);
  });
});

describe("tus uploads", () => {
  const post = (user: string | null, tenant: string) =>
    stack.app.fetch(stack.app.url(`${API}/uploads`), {
      method: "POST",
      headers: { ...TUS, ...as(user), "upload-length": "3", "upload-metadata": meta(tenant) },
    });

  it("needs a token and the creator role, within the caller's tenants", async () => {
    expect((await post(null, "acme")).status).toBe(401);
    expect((await post("cms-consumer", "acme")).status).toBe(403);
    expect((await post("acme-creator", "other")).status).toBe(403);
    expect((await post("acme-creator", "acme")).status).toBe(201);
  });

  it("only its creator (or an admin) sees and continues an upload; the resource is the creator's", async () => {
    const start = await post("cms-creator", "acme");
    const upload = stack.app.url(start.headers.get("location") as string);
    const head = (user: string) => stack.app.fetch(upload, { method: "HEAD", headers: { ...TUS, ...as(user) } });
    expect((await head("acme-creator")).status).toBe(403);
    expect((await head("cms-admin")).status).toBe(200);
    const patch = (user: string) =>
      stack.app.fetch(upload, {
        method: "PATCH",
        headers: { ...TUS, ...as(user), "upload-offset": "0", "content-type": "application/offset+octet-stream" },
        body: "abc",
      });
    expect((await patch("acme-creator")).status).toBe(403);
    const done = await patch("cms-creator");
    expect(done.status).toBe(201);
    const { resourceUID } = (await done.json()) as { resourceUID: string };
    // The owner may lock it (modify); another creator may not.
    const lock = (user: string) =>
      stack.app.fetch(stack.app.url(`${API}/lockResourceDTO`), {
        method: "POST",
        headers: { ...as(user), "content-type": "application/json" },
        body: JSON.stringify({ resourceUID, author: "S" }),
      });
    expect((await lock("acme-creator")).status).toBe(403);
    expect((await lock("cms-creator")).status).toBe(200);
  });
});
