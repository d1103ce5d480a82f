/**
 * Issue 38 with auth on (real dev IdP, real tokens): search and folders confine a tenant-confined
 * token exactly as listResources does, and only the owner or an admin may change a description.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, startAuthStack } from "../helpers/auth-stack.js";
import { type Client, cmsClient, expectProblem } from "../helpers/cms-client.js";

let stack: AuthStack;
const as: Record<string, Client> = {};

beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  for (const user of ["cms-admin", "cms-creator", "acme-creator", "no-roles"])
    as[user] = cmsClient(stack.app, "acme", await stack.passwordToken(user));
});
afterAll(() => stack.close());
afterEach(() => expect(stack.app.unhandledErrors()).toEqual([]));

const client = (user: string) => as[user] as Client;

describe("tenant confinement and roles", () => {
  it("a confined token searches and lists folders of its tenants only: 403 elsewhere, as listResources", async () => {
    for (const path of ["searchResources?tenant=other", "folders?tenant=other", "listResources?tenant=other"])
      await expectProblem(await client("acme-creator").get(path), 403, "FORBIDDEN");
    for (const path of ["searchResources?tenant=acme&q=x", "folders?tenant=acme"])
      expect((await client("acme-creator").get(path)).status).toBe(200);
    await expectProblem(await cmsClient(stack.app, "acme").get("searchResources?tenant=acme"), 401, "UNAUTHENTICATED");
    await expectProblem(await client("no-roles").get("searchResources?tenant=acme"), 403, "FORBIDDEN");
  });

  it("only the owner or an admin may update a description", async () => {
    const own = await client("cms-creator").create({ resourceTenantId: "acme", title: "mine" });
    const body = { resourceUID: own.resourceUID, patch: { title: "theirs" } };
    await expectProblem(await client("acme-creator").post("updateResourceMetadata", body), 403, "FORBIDDEN");
    expect((await client("cms-creator").post("updateResourceMetadata", body)).status).toBe(200);
    expect((await client("cms-admin").post("updateResourceMetadata", body)).status).toBe(200);
    const elsewhere = await client("cms-creator").create({ resourceTenantId: "other" });
    await expectProblem(
      await client("acme-creator").post("updateResourceMetadata", { ...body, resourceUID: elsewhere.resourceUID }),
      403,
      "FORBIDDEN",
    );
  });
});
