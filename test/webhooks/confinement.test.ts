/**
 * Webhook subscriptions under tenant confinement (issue 41 item 5), through the real app with the dev
 * IdP's password-grant tokens: an admin confined to `acme` creates, sees and manages only
 * subscriptions limited to its tenants; all-tenant subscriptions and other tenants' need an
 * unconfined admin, the same rule purge keeps (403 on another tenant's resource).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, expectProblem } from "../helpers/cms-client.js";

let stack: AuthStack;
const tokens: Record<string, string> = {};
beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  for (const user of ["cms-admin", "acme-admin"]) tokens[user] = await stack.passwordToken(user);
});
afterAll(() => stack?.close());

const call = (user: string, method: string, path: string, body?: unknown) =>
  stack.app.fetch(stack.app.url(`${API}${path}`), {
    method,
    headers: { ...bearer(tokens[user] as string), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
const subscribe = (user: string, tenants?: string[]) =>
  call(user, "POST", "/webhooks", { url: "http://127.0.0.1:9/hook", ...(tenants ? { tenants } : {}) });
const created = async (res: Response) => {
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { id: string }).id;
};
const listed = async (user: string) => {
  const res = await call(user, "GET", "/webhooks");
  expect(res.status).toBe(200);
  return ((await res.json()) as { webhooks: { id: string }[] }).webhooks.map((w) => w.id).sort();
};

it("a confined admin subscribes only to its own tenants, never to all of them", async () => {
  await created(await subscribe("acme-admin", ["acme"]));
  await expectProblem(await subscribe("acme-admin", ["beta"]), 403, "FORBIDDEN");
  await expectProblem(await subscribe("acme-admin", ["acme", "beta"]), 403, "FORBIDDEN");
  await expectProblem(await subscribe("acme-admin"), 403, "FORBIDDEN"); // {}: every tenant
  await expectProblem(await subscribe("acme-admin", []), 403, "FORBIDDEN");
  // The unconfined admin may do all of it.
  await created(await subscribe("cms-admin", ["beta"]));
  await created(await subscribe("cms-admin"));
});

it("a confined admin lists, inspects, retries and deletes only subscriptions within its tenants", async () => {
  const mine = await created(await subscribe("acme-admin", ["acme"]));
  const acmeByOther = await created(await subscribe("cms-admin", ["acme"]));
  const beta = await created(await subscribe("cms-admin", ["beta"]));
  const every = await created(await subscribe("cms-admin"));
  const mixed = await created(await subscribe("cms-admin", ["acme", "beta"]));

  const visible = await listed("acme-admin");
  expect(visible).toEqual(expect.arrayContaining([mine, acmeByOther]));
  for (const hidden of [beta, every, mixed]) expect(visible).not.toContain(hidden);
  expect(await listed("cms-admin")).toEqual(expect.arrayContaining([mine, acmeByOther, beta, every, mixed]));

  for (const other of [beta, every, mixed]) {
    await expectProblem(await call("acme-admin", "GET", `/webhooks/${other}/deliveries`), 403, "FORBIDDEN");
    await expectProblem(
      await call("acme-admin", "POST", `/webhooks/${other}/deliveries/msg_none/retry`),
      403,
      "FORBIDDEN",
    );
    await expectProblem(await call("acme-admin", "DELETE", `/webhooks/${other}`), 403, "FORBIDDEN");
  }
  // Still there for the unconfined admin, which may remove them.
  expect(await listed("cms-admin")).toEqual(expect.arrayContaining([beta, every, mixed]));
  expect((await call("cms-admin", "DELETE", `/webhooks/${beta}`)).status).toBe(204);

  // Within its tenants, another admin's subscription is as manageable as its own.
  expect((await call("acme-admin", "GET", `/webhooks/${acmeByOther}/deliveries`)).status).toBe(200);
  expect((await call("acme-admin", "DELETE", `/webhooks/${acmeByOther}`)).status).toBe(204);
  expect((await call("acme-admin", "DELETE", `/webhooks/${mine}`)).status).toBe(204);
});
