/**
 * Token attacks against the real server with auth on, using the real dev IdP on loopback: every
 * forged, stale or misdirected token gets 401 with an RFC 6750 challenge, and never content.
 */
import { base64url, generateKeyPair, SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { json } from "../helpers/test-app.js";

let stack: AuthStack;
let origin: Origin;
let resourcePath: string;

beforeAll(async () => {
  origin = await startOrigin();
  stack = await startAuthStack({}, { transport: "in-process" });
  const token = await stack.passwordToken("cms-creator");
  const res = await stack.app.fetch(stack.app.url("/cms/v1.0/createResource"), {
    ...json({
      resourceAuthor: "a",
      resourceExternalURI: origin.put("secret", "secret content"),
      resourceMediaType: "text/plain",
      resourceName: "s.txt",
      resourceTenantId: "t1",
    }),
    headers: { "content-type": "application/json", ...bearer(token) },
  });
  expect(res.status).toBe(201);
  resourcePath = `/cms/v1.0/getData/${((await res.json()) as { resourceURI: string }).resourceURI}`;
});
afterAll(async () => {
  await stack.close();
  await origin.close();
});
afterEach(() => expect(stack.app.unhandledErrors()).toEqual([]));

const now = () => Math.floor(Date.now() / 1000);

async function expect401(headers: Record<string, string>, errorCode: "invalid_token" | null = "invalid_token") {
  for (const path of [resourcePath, "/apiversion"]) {
    const res = await stack.app.fetch(stack.app.url(path), { headers });
    expect(res.status, path).toBe(401);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer realm="CMS"/);
    if (errorCode) expect(challenge).toContain(`error="${errorCode}"`);
    else expect(challenge).not.toContain("error=");
    const body = await res.text();
    expect(body).not.toContain("secret content");
    expect(JSON.parse(body)).toMatchObject({ code: "UNAUTHENTICATED", status: 401 });
  }
}

describe("attack matrix: each → 401", () => {
  it("no token at all (challenge without an error code, RFC 6750 §3.1)", async () => {
    await expect401({}, null);
  });

  it("alg: none", async () => {
    const payload = {
      iss: stack.idp.issuer,
      aud: "cms-server",
      sub: "cms-admin",
      iat: now(),
      exp: now() + 300,
      realm_access: { roles: ["admin"] },
    };
    const token = `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${base64url.encode(JSON.stringify(payload))}.`;
    await expect401(bearer(token));
  });

  it("HS256 signed with the IdP's public key as the HMAC secret", async () => {
    const jwks = (await (await fetch(`${stack.idp.issuer}/protocol/openid-connect/certs`)).json()) as {
      keys: { n: string; kid: string }[];
    };
    const key = jwks.keys[0];
    const token = await new SignJWT({
      iss: stack.idp.issuer,
      aud: "cms-server",
      sub: "cms-admin",
      realm_access: { roles: ["admin"] },
    })
      .setProtectedHeader({ alg: "HS256", kid: key?.kid })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(key)));
    await expect401(bearer(token));
  });

  it("wrong issuer, even signed by the trusted key", async () => {
    await expect401(
      bearer(await stack.forge({ iss: "http://127.0.0.1:1/auth/realms/OTHER", realm_access: { roles: ["admin"] } })),
    );
    await expect401(bearer(await stack.forge({ iss: `${stack.idp.issuer}/`, realm_access: { roles: ["admin"] } })));
  });

  it("wrong audience and a foreign azp", async () => {
    await expect401(
      bearer(await stack.forge({ aud: "another-api", azp: "another-client", realm_access: { roles: ["admin"] } })),
    );
  });

  it("expired beyond the clock tolerance", async () => {
    await expect401(
      bearer(await stack.forge({ iat: now() - 3600, exp: now() - 120, realm_access: { roles: ["admin"] } })),
    );
  });

  it("not yet valid (nbf in the future)", async () => {
    await expect401(bearer(await stack.forge({ nbf: now() + 600, realm_access: { roles: ["admin"] } })));
  });

  it("an unknown kid", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const token = await new SignJWT({
      iss: stack.idp.issuer,
      aud: "cms-server",
      sub: "x",
      realm_access: { roles: ["admin"] },
    })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: "not-a-known-kid" })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
    await expect401(bearer(token));
  });

  it("a tampered payload (roles raised after signing)", async () => {
    const real = await stack.passwordToken("cms-consumer");
    const [header, payload, signature] = real.split(".") as [string, string, string];
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload)));
    claims.realm_access = { roles: ["admin"] };
    await expect401(bearer(`${header}.${base64url.encode(JSON.stringify(claims))}.${signature}`));
  });

  it("a token of a rotated-out key", async () => {
    // A second stack: rotating the IdP key must not disturb the other cases. Its server runs on a
    // clock the test moves (AppDeps["clock"], which the token verifier shares), so the floor is long
    // enough that real time never passes it here: only moving the clock lets the new kid be fetched.
    // The default 30 s cool-down stays: only the refetch floor has to pass for a new kid.
    const time = fakeClock();
    const rotating = await startAuthStack(
      { CMS_AUTH_JWKS_REFETCH_FLOOR_MS: "20000" },
      { clock: time.clock, transport: "in-process" },
    );
    try {
      const old = await rotating.passwordToken("cms-admin");
      const ok = await rotating.app.fetch(rotating.app.url("/apiversion"), { headers: bearer(old) });
      expect(ok.status).toBe(200);
      await rotating.idp.rotateKey();
      time.advance(20_000); // past the JWKS refetch floor
      const fresh = await rotating.passwordToken("cms-admin");
      // The server learns the new key without a restart …
      expect((await rotating.app.fetch(rotating.app.url("/apiversion"), { headers: bearer(fresh) })).status).toBe(200);
      // … and the old key is gone from the JWKS, so its tokens no longer verify.
      const res = await rotating.app.fetch(rotating.app.url("/apiversion"), { headers: bearer(old) });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    } finally {
      await rotating.close();
    }
  });

  it("a forged token signed by a key the IdP never published, reusing its kid", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    const jwks = (await (await fetch(`${stack.idp.issuer}/protocol/openid-connect/certs`)).json()) as {
      keys: { kid: string }[];
    };
    const token = await new SignJWT({
      iss: stack.idp.issuer,
      aud: "cms-server",
      sub: "x",
      realm_access: { roles: ["admin"] },
    })
      .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: jwks.keys[0]?.kid })
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
    await expect401(bearer(token));
  });

  it("a token of the explorer (an accepted client) whose aud does not name cms-server", async () => {
    await expect401(
      bearer(
        await stack.forge({
          aud: "account",
          azp: "cms-explorer",
          resource_access: { "cms-server": { roles: ["admin"] } },
        }),
      ),
    );
  });

  it("a token naming cms-server in aud but issued to another client of the realm", async () => {
    await expect401(
      bearer(
        await stack.forge({
          aud: ["cms-server", "account"],
          azp: "other-app",
          resource_access: { "cms-server": { roles: ["admin"] } },
        }),
      ),
    );
  });

  it("a malformed header is a 400 invalid_request, and a token in the query string is refused", async () => {
    const res = await stack.app.fetch(stack.app.url("/apiversion"), {
      headers: { authorization: "Bearer two tokens" },
    });
    expect(res.status).toBe(400);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_request"');
    const token = await stack.passwordToken("cms-admin");
    const query = await stack.app.fetch(stack.app.url(`/apiversion?access_token=${token}`));
    expect(query.status).toBe(400);
  });
});

describe("genuine tokens", () => {
  it("accepts the password-grant token of each user (seed §5.3)", async () => {
    for (const user of ["cms-admin", "cms-creator", "cms-consumer"]) {
      const res = await stack.app.fetch(stack.app.url("/apiversion"), {
        headers: { accept: "application/json", ...bearer(await stack.passwordToken(user)) },
      });
      expect(res.status, user).toBe(200);
      expect(await res.json()).toEqual({ minVersion: 1, maxVersion: 1, versionContexts: { "1.0": "/cms/v1.0" } });
    }
  });

  it("reads roles from cms-server's client roles; realm roles of a shared realm grant nothing (403)", async () => {
    const clientRoles = await stack.forge({
      azp: "cms-explorer",
      resource_access: { "cms-server": { roles: ["consumer"] } },
    });
    expect((await stack.app.fetch(stack.app.url("/apiversion"), { headers: bearer(clientRoles) })).status).toBe(200);
    const realmRoles = await stack.forge({
      azp: "cms-explorer",
      realm_access: { roles: ["admin"] },
      resource_access: { "other-app": { roles: ["admin"] } },
    });
    const res = await stack.app.fetch(stack.app.url("/apiversion"), { headers: bearer(realmRoles) });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });

  it("honours realm roles when CMS_AUTH_REALM_ROLES=true", async () => {
    const realm = await startAuthStack({ CMS_AUTH_REALM_ROLES: "true" }, { transport: "in-process" });
    try {
      const token = await realm.forge({ azp: "cms-explorer", realm_access: { roles: ["consumer"] } });
      expect((await realm.app.fetch(realm.app.url("/apiversion"), { headers: bearer(token) })).status).toBe(200);
    } finally {
      await realm.close();
    }
  });

  it("refuses a wrong password at the IdP", async () => {
    await expect(stack.passwordToken("cms-admin", "wrong")).rejects.toThrow(/400/);
  });

  it("leaves health, the OpenAPI document and the explorer open", async () => {
    for (const path of ["/healthz", "/readyz", "/openapi.json", "/swagger-ui.html", "/docs", "/explorer.js"]) {
      expect((await stack.app.fetch(stack.app.url(path))).status, path).toBe(200);
    }
  });
});
