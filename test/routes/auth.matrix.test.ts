/**
 * Who may do what, with real tokens from the dev IdP's password grant: every endpoint × role,
 * tenant confinement from the token's `tenants` claim, signed links and CMS_PUBLIC_READ.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLinkSigner } from "../../src/auth/signed-links.js";
import { type AuthStack, bearer, LINK_SECRET, startAuthStack } from "../helpers/auth-stack.js";
import { type Origin, startOrigin } from "../helpers/origin.js";

let stack: AuthStack;
let origin: Origin;
const tokens: Record<string, string> = {};
const USERS = ["cms-admin", "cms-creator", "cms-consumer", "no-roles"] as const;
type User = (typeof USERS)[number];

beforeAll(async () => {
  origin = await startOrigin();
  stack = await startAuthStack();
  for (const user of [...USERS, "acme-creator"]) tokens[user] = await stack.passwordToken(user);
});
afterAll(async () => {
  await stack.close();
  await origin.close();
});
afterEach(() => expect(stack.app.unhandledErrors()).toEqual([]));

const call = (token: string | null, method: string, path: string, body?: unknown) =>
  fetch(stack.app.url(path), {
    method,
    headers: { ...(token ? bearer(token) : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });

const createBody = (tenant = "t1", name = "m.txt") => ({
  resourceAuthor: "matrix",
  resourceExternalURI: origin.put(`m-${tenant}-${name}`, `content of ${tenant}/${name}`),
  resourceMediaType: "text/plain",
  resourceName: name,
  resourceTenantId: tenant,
});

async function createAs(user: string, tenant = "t1", name = "m.txt") {
  const res = await call(tokens[user] as string, "POST", "/cms/v1.0/createResource", createBody(tenant, name));
  expect(res.status).toBe(201);
  return (await res.json()) as { resourceURI: string; resourceUID: string };
}

describe("permission matrix: endpoint × role (own and other owner's resources)", () => {
  // Expected status per user, for a resource the caller created ("own") and one the admin created ("other").
  type Case = { name: string; run: (token: string, target: { resourceURI: string }) => Promise<Response>; expect: Record<User, number> };
  const cases: Case[] = [
    { name: "GET /apiversion", run: (t) => call(t, "GET", "/apiversion"), expect: { "cms-admin": 200, "cms-creator": 200, "cms-consumer": 200, "no-roles": 403 } },
    {
      name: "POST createResource",
      run: (t) => call(t, "POST", "/cms/v1.0/createResource", createBody()),
      expect: { "cms-admin": 201, "cms-creator": 201, "cms-consumer": 403, "no-roles": 403 },
    },
    {
      name: "GET getData",
      run: (t, r) => call(t, "GET", `/cms/v1.0/getData/${r.resourceURI}`),
      expect: { "cms-admin": 200, "cms-creator": 200, "cms-consumer": 200, "no-roles": 403 },
    },
    {
      name: "HEAD getData",
      run: (t, r) => call(t, "HEAD", `/cms/v1.0/getData/${r.resourceURI}`),
      expect: { "cms-admin": 200, "cms-creator": 200, "cms-consumer": 200, "no-roles": 403 },
    },
    {
      name: "POST createDataLink",
      run: (t, r) => call(t, "POST", "/cms/v1.0/createDataLink", { resourceURI: r.resourceURI }),
      expect: { "cms-admin": 200, "cms-creator": 200, "cms-consumer": 200, "no-roles": 403 },
    },
  ];

  let adminOwned: { resourceURI: string };
  let creatorOwned: { resourceURI: string };
  beforeAll(async () => {
    adminOwned = await createAs("cms-admin", "t1", "admin.txt");
    creatorOwned = await createAs("cms-creator", "t1", "creator.txt");
  });

  for (const c of cases) {
    for (const user of USERS) {
      it(`${c.name} as ${user} → ${c.expect[user]} on own and other's resources`, async () => {
        for (const target of [creatorOwned, adminOwned]) {
          const res = await c.run(tokens[user] as string, target);
          expect(res.status).toBe(c.expect[user]);
          if (res.status === 403) {
            expect(res.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
            expect(res.headers.get("content-type")).toBe("application/problem+json");
            if (!c.name.startsWith("HEAD")) expect(await res.json()).toMatchObject({ code: "FORBIDDEN" });
          }
        }
      });
    }
  }

  it("records the token's subject as owner, never a request field", async () => {
    const res = await call(tokens["cms-creator"] as string, "POST", "/cms/v1.0/createResource", { ...createBody("t1", "own.txt"), owner: "cms-admin" });
    expect(res.status).toBe(201);
    const { resourceUID } = (await res.json()) as { resourceUID: string };
    const row = await stack.app.deps.store.findByUid(resourceUID);
    expect(row?.owner).toBe("cms-creator");
  });
});

describe("tenant confinement (tenants claim)", () => {
  it("lets a confined creator work in its tenant only", async () => {
    const acme = tokens["acme-creator"] as string;
    expect((await call(acme, "POST", "/cms/v1.0/createResource", createBody("acme", "a.txt"))).status).toBe(201);
    const other = await call(acme, "POST", "/cms/v1.0/createResource", createBody("t1", "a.txt"));
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses a confined caller another tenant's content and links (403), but not its own", async () => {
    const foreign = await createAs("cms-admin", "t1", "foreign.txt");
    const acme = tokens["acme-creator"] as string;
    expect((await call(acme, "GET", `/cms/v1.0/getData/${foreign.resourceURI}`)).status).toBe(403);
    expect((await call(acme, "POST", "/cms/v1.0/createDataLink", { resourceURI: foreign.resourceURI })).status).toBe(403);
    const own = await createAs("acme-creator", "acme", "mine.txt");
    expect((await call(acme, "GET", `/cms/v1.0/getData/${own.resourceURI}`)).status).toBe(200);
  });
});

describe("signed links", () => {
  let target: { resourceURI: string };
  let other: { resourceURI: string };
  beforeAll(async () => {
    target = await createAs("cms-creator", "t1", "linked.txt");
    other = await createAs("cms-creator", "t1", "other.txt");
  });

  async function mint(resourceURI: string, expiresIn?: number) {
    const res = await call(tokens["cms-consumer"] as string, "POST", "/cms/v1.0/createDataLink", { resourceURI, expiresIn });
    expect(res.status).toBe(200);
    return (await res.json()) as { url: string; expires: string };
  }

  it("works without any header, for GET and HEAD, until it expires", async () => {
    const link = await mint(target.resourceURI, 600);
    expect(new Date(link.expires).getTime() - Date.now()).toBeGreaterThan(590_000);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("content of t1/linked.txt");
    expect((await fetch(link.url, { method: "HEAD" })).status).toBe(200);
    // Without the link's query the same path still needs a token.
    expect((await fetch(link.url.split("?")[0] as string)).status).toBe(401);
  });

  it("refuses an expired link", async () => {
    const signer = await createLinkSigner(LINK_SECRET);
    const path = `/cms/v1.0/getData/${target.resourceURI}`;
    const expired = await signer.sign(path, Math.floor(Date.now() / 1000) - 1);
    const res = await fetch(stack.app.url(`${path}?${expired}`));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses a tampered signature or expiry, and another resource's path", async () => {
    const link = new URL((await mint(target.resourceURI)).url);
    const tampered = new URL(link);
    const sig = tampered.searchParams.get("signature") as string;
    tampered.searchParams.set("signature", `${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`);
    expect((await fetch(tampered)).status).toBe(403);

    const extended = new URL(link);
    extended.searchParams.set("expires", String(Number(link.searchParams.get("expires")) + 3600));
    expect((await fetch(extended)).status).toBe(403);

    const otherPath = new URL(`/cms/v1.0/getData/${other.resourceURI}${link.search}`, link);
    expect((await fetch(otherPath)).status).toBe(403);
  });

  it("refuses link lifetimes over 7 days", async () => {
    const res = await call(tokens["cms-consumer"] as string, "POST", "/cms/v1.0/createDataLink", { resourceURI: target.resourceURI, expiresIn: 8 * 24 * 3600 });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { pointer: string }[] }).errors[0]?.pointer).toBe("/json/expiresIn");
  });
});

describe("CMS_PUBLIC_READ=true", () => {
  it("serves getData without a token while writes still need one", async () => {
    const open = await startAuthStack({ CMS_PUBLIC_READ: "true" });
    try {
      const token = await open.passwordToken("cms-creator");
      const created = await fetch(open.app.url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(token) },
        body: JSON.stringify(createBody("pub", "p.txt")),
      });
      expect(created.status).toBe(201);
      const { resourceURI } = (await created.json()) as { resourceURI: string };
      expect((await fetch(open.app.url(`/cms/v1.0/getData/${resourceURI}`))).status).toBe(200);
      const anonymous = await fetch(open.app.url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(createBody("pub", "q.txt")),
      });
      expect(anonymous.status).toBe(401);
    } finally {
      await open.close();
    }
  });
});
