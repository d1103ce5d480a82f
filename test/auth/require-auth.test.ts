// authenticate/requireRole on a tiny in-process Hono app: RFC 6750 header parsing, exact challenges,
// problem+json bodies, 403 insufficient_scope and the anonymous principal when auth is off.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { type AuthEnv, authenticate, requireRole } from "../../src/auth/require-auth.js";
import { invalidToken, type TokenVerifier, type VerifiedClaims } from "../../src/auth/verify-token.js";
import { ProblemError, problemResponse } from "../../src/problems.js";

const t = Math.floor(Date.now() / 1000);
const base = { iss: "https://idp.example/realms/CMS", iat: t, exp: t + 300, aud: "cms-server" };
const TOKENS: Record<string, VerifiedClaims> = {
  "consumer-token": { ...base, sub: "c-1", resource_access: { "cms-server": { roles: ["consumer"] } } },
  "creator-token": {
    ...base,
    sub: "w-1",
    preferred_username: "writer",
    resource_access: { "cms-server": { roles: ["creator"] } },
  },
  "admin-token": { ...base, sub: "a-1", resource_access: { "cms-server": { roles: ["admin"] } }, org: ["t1", "t2"] },
  "bad-tenants": { ...base, sub: "x", resource_access: { "cms-server": { roles: ["admin"] } }, tenants: 7 },
  "b64+/token==": { ...base, sub: "b64", resource_access: { "cms-server": { roles: ["consumer"] } } },
};

/** Stands in for the jose verifier (tested on its own): fixed tokens, an IdP outage, everything else invalid. */
const verifier: TokenVerifier = {
  clientId: "cms-server",
  async verify(token) {
    const claims = TOKENS[token];
    if (claims) return claims;
    if (token === "idp-down") throw new ProblemError("UNAVAILABLE", "cannot verify access tokens right now");
    throw invalidToken("invalid signature");
  },
};

function appWith(v: TokenVerifier | null, tenantClaim?: string) {
  const app = new Hono<AuthEnv>();
  app.onError((err, c) =>
    err instanceof ProblemError ? problemResponse(err, new URL(c.req.url).pathname) : c.text("unexpected", 500),
  );
  app.use("*", authenticate(v, tenantClaim ? { tenantClaim } : {}));
  app.get("/me", (c) => {
    const p = c.get("principal");
    return c.json({
      subject: p.subject,
      username: p.username ?? null,
      roles: [...p.roles].sort(),
      tenants: p.tenants,
      anonymous: p.anonymous,
    });
  });
  app.post("/create", requireRole("creator"), (c) => c.text("created"));
  app.delete("/purge", requireRole("admin"), (c) => c.text("purged"));
  return app;
}

const app = appWith(verifier);
const get = (authorization?: string, path = "/me", method = "GET", target = app) =>
  target.request(path, { method, headers: authorization === undefined ? {} : { authorization } });

async function expectProblem(res: Response, status: number, challenge: string | null, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("www-authenticate")).toBe(challenge);
  expect(await res.json()).toMatchObject({ status, code });
}

describe("authenticate: header parsing (RFC 6750 §2.1)", () => {
  it("accepts the Bearer scheme case-insensitively and extra spaces before the token", async () => {
    for (const header of [
      "Bearer creator-token",
      "bearer creator-token",
      "BEARER creator-token",
      "Bearer    creator-token",
      "  Bearer creator-token  ",
    ]) {
      const res = await get(header);
      expect(res.status, header).toBe(200);
      expect(await res.json()).toEqual({
        subject: "w-1",
        username: "writer",
        roles: ["consumer", "creator"],
        tenants: null,
        anonymous: false,
      });
    }
  });

  it("accepts the full b64token alphabet", async () => {
    expect((await get("Bearer b64+/token==")).status).toBe(200);
  });

  it("no Authorization header → 401 with a bare challenge (no error code, §3.1)", async () => {
    await expectProblem(await get(), 401, 'Bearer realm="CMS"', "UNAUTHENTICATED");
  });

  it("another scheme (Basic) counts as no bearer credentials → bare challenge", async () => {
    await expectProblem(await get("Basic dXNlcjpwYXNz"), 401, 'Bearer realm="CMS"', "UNAUTHENTICATED");
    await expectProblem(await get("Bearerx creator-token"), 401, 'Bearer realm="CMS"', "UNAUTHENTICATED");
  });

  it("two tokens, no token, or characters outside b64token → 400 invalid_request", async () => {
    const challenge =
      'Bearer realm="CMS", error="invalid_request", error_description="the Authorization header must carry exactly one bearer token"';
    for (const header of [
      "Bearer creator-token admin-token",
      "Bearer",
      "Bearer ",
      "Bearer creator-token,admin-token",
      'Bearer "creator-token"',
    ]) {
      await expectProblem(await get(header), 400, challenge, "VALIDATION_FAILED");
    }
  });

  it("refuses access tokens in the query string (RFC 6750 §2.3 is not supported)", async () => {
    const res = await get("Bearer creator-token", "/me?access_token=admin-token");
    await expectProblem(
      res,
      400,
      'Bearer realm="CMS", error="invalid_request", error_description="access tokens are not accepted in the query string; use the Authorization header"',
      "VALIDATION_FAILED",
    );
    expect((await get(undefined, "/me?access_token=admin-token")).status).toBe(400);
  });

  it("an invalid token → 401 invalid_token with a description", async () => {
    await expectProblem(
      await get("Bearer forged"),
      401,
      'Bearer realm="CMS", error="invalid_token", error_description="invalid signature"',
      "UNAUTHENTICATED",
    );
  });

  it("an IdP outage passes through as 503 without a challenge", async () => {
    await expectProblem(await get("Bearer idp-down"), 503, null, "UNAVAILABLE");
  });

  it("maps tenants from the configured claim; a malformed tenant claim is a 401", async () => {
    const res = await get("Bearer admin-token", "/me", "GET", appWith(verifier, "org"));
    expect(await res.json()).toMatchObject({ subject: "a-1", tenants: ["t1", "t2"] });
    const bad = await get("Bearer bad-tenants");
    await expectProblem(
      bad,
      401,
      'Bearer realm="CMS", error="invalid_token", error_description="malformed tenants claim"',
      "UNAUTHENTICATED",
    );
  });
});

describe("requireRole", () => {
  it("403 insufficient_scope when the role is missing", async () => {
    await expectProblem(
      await get("Bearer consumer-token", "/create", "POST"),
      403,
      'Bearer realm="CMS", error="insufficient_scope", error_description="the creator role is required"',
      "FORBIDDEN",
    );
    await expectProblem(
      await get("Bearer creator-token", "/purge", "DELETE"),
      403,
      'Bearer realm="CMS", error="insufficient_scope", error_description="the admin role is required"',
      "FORBIDDEN",
    );
  });

  it("passes when the role is held directly or implied", async () => {
    expect((await get("Bearer creator-token", "/create", "POST")).status).toBe(200);
    expect((await get("Bearer admin-token", "/create", "POST")).status).toBe(200);
    expect((await get("Bearer admin-token", "/purge", "DELETE")).status).toBe(200);
  });

  it("authentication runs before authorization: no token on a guarded route is 401, not 403", async () => {
    await expectProblem(await get(undefined, "/purge", "DELETE"), 401, 'Bearer realm="CMS"', "UNAUTHENTICATED");
  });

  it("mounted without authenticate() it fails closed", async () => {
    const bare = new Hono<AuthEnv>();
    bare.onError((err, c) => (err instanceof ProblemError ? problemResponse(err) : c.text("unexpected", 500)));
    bare.get("/x", requireRole("consumer"), (c) => c.text("ok"));
    expect((await bare.request("/x")).status).toBe(500);
  });
});

describe("auth off (verifier null)", () => {
  const open = appWith(null);

  it("sets the anonymous principal and ignores the Authorization header entirely", async () => {
    for (const header of [undefined, "Basic abc", "Bearer two tokens", "Bearer forged"]) {
      const res = await get(header, "/me", "GET", open);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        subject: null,
        username: null,
        roles: ["admin", "consumer", "creator"],
        tenants: null,
        anonymous: true,
      });
    }
  });

  it("every role guard passes", async () => {
    expect((await get(undefined, "/purge", "DELETE", open)).status).toBe(200);
    expect((await get(undefined, "/create", "POST", open)).status).toBe(200);
  });
});
