/** The dev IdP over real loopback sockets: discovery, password + refresh grants, key rotation, auth code + PKCE. */
import { createHash, randomBytes } from "node:crypto";
import {
  base64url,
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  jwtVerify,
  type JWTPayload,
} from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_ONLY_WARNING, type RunningIdp, startIdp } from "../../scripts/idp/server.js";

const APP_ORIGIN = "http://127.0.0.1:9082";
const REDIRECT_URI = `${APP_ORIGIN}/swagger-ui.html`;
const SECRET = "test-secret";

interface TokenResponse {
  access_token?: string;
  refresh_token?: string;
  id_token?: string;
  token_type?: string;
  expires_in?: number;
  scope?: string;
  error?: string;
}

interface KeycloakClaims extends JWTPayload {
  azp?: string;
  scope?: string;
  typ?: string;
  preferred_username?: string;
  realm_access?: { roles: string[] };
  resource_access?: Record<string, { roles: string[] }>;
  tenants?: string[];
}

const logged: string[] = [];
let idp: RunningIdp;
const url = (path: string) => `${idp.issuer}/protocol/openid-connect/${path}`;

beforeAll(async () => {
  idp = await startIdp({
    port: 0,
    appOrigins: [APP_ORIGIN],
    clientSecret: SECRET,
    users: [{ username: "acme-editor", password: "acme-pw", roles: ["creator"], tenants: ["acme"] }],
    log: (line) => logged.push(line),
  });
});
afterAll(() => idp.close());

async function postForm(target: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(target, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form),
  });
}

async function passwordGrant(
  username: string,
  password: string,
  target = idp,
  secret = SECRET,
): Promise<{ status: number; body: TokenResponse }> {
  const res = await postForm(`${target.issuer}/protocol/openid-connect/token`, {
    client_id: "cms-server",
    client_secret: secret,
    username,
    password,
    grant_type: "password",
  });
  return { status: res.status, body: (await res.json()) as TokenResponse };
}

async function verify(token: string, target = idp) {
  const jwks = createRemoteJWKSet(new URL(`${target.issuer}/protocol/openid-connect/certs`));
  return jwtVerify<KeycloakClaims>(token, jwks, {
    issuer: target.issuer,
    audience: "cms-server",
    algorithms: ["RS256"],
  });
}

describe("discovery and start-up", () => {
  it("serves Keycloak paths under the realm issuer and lists the password grant", async () => {
    expect(idp.issuer).toBe(`http://127.0.0.1:${idp.port}/auth/realms/CMS`);
    const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: idp.issuer,
      authorization_endpoint: url("auth"),
      token_endpoint: url("token"),
      jwks_uri: url("certs"),
      userinfo_endpoint: url("userinfo"),
      end_session_endpoint: url("logout"),
      code_challenge_methods_supported: ["S256"],
    });
    expect(doc.grant_types_supported).toEqual(
      expect.arrayContaining(["password", "authorization_code", "refresh_token"]),
    );
  });

  it("publishes one RS256 key whose kid is its JWK thumbprint", async () => {
    const { keys } = (await (await fetch(url("certs"))).json()) as { keys: Array<Record<string, string>> };
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig", kid: idp.kid });
    expect(key).not.toHaveProperty("d");
    expect(await calculateJwkThumbprint(key ?? {})).toBe(idp.kid);
  });

  it("prints the development-only warning", () => {
    expect(logged).toContain(DEV_ONLY_WARNING);
    expect(DEV_ONLY_WARNING).toMatch(/development only.*never use them in production or on a reachable address/);
  });

  it("refuses non-loopback hosts before binding", async () => {
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "example.test"]) {
      await expect(startIdp({ port: 0, host, log: () => {} })).rejects.toThrow(/refuses to bind/);
    }
  });

  it("404s outside the realm path", async () => {
    expect((await fetch(`http://127.0.0.1:${idp.port}/auth/realms/CMSX/.well-known/openid-configuration`)).status).toBe(
      404,
    );
  });
});

describe("password grant (cms-server)", () => {
  it.each([
    ["cms-admin", "admin"],
    ["cms-creator", "creator"],
    ["cms-consumer", "consumer"],
  ])("issues a Keycloak-shaped JWT for %s", async (username, role) => {
    const { status, body } = await passwordGrant(username, username);
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 300 });
    expect(body.refresh_token).toEqual(expect.any(String));

    const { payload, protectedHeader } = await verify(body.access_token ?? "");
    expect(protectedHeader).toMatchObject({ alg: "RS256", typ: "JWT", kid: idp.kid });
    expect(payload).toMatchObject({
      iss: idp.issuer,
      aud: "cms-server",
      sub: username,
      azp: "cms-server",
      typ: "Bearer",
      preferred_username: username,
      realm_access: { roles: [role] },
      resource_access: { "cms-server": { roles: [role] } },
    });
    expect(payload.scope).toBe("profile email");
    expect(payload.jti).toEqual(expect.any(String));
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(300);
    expect(payload).not.toHaveProperty("tenants");
  });

  it("adds a tenants claim and custom roles for users passed as options", async () => {
    const { body } = await passwordGrant("acme-editor", "acme-pw");
    const { payload } = await verify(body.access_token ?? "");
    expect(payload.tenants).toEqual(["acme"]);
    expect(payload.realm_access?.roles).toEqual(["creator"]);
  });

  it("accepts the client secret as HTTP Basic too", async () => {
    const res = await postForm(
      url("token"),
      { grant_type: "password", username: "cms-admin", password: "cms-admin" },
      { authorization: `Basic ${Buffer.from(`cms-server:${SECRET}`).toString("base64")}` },
    );
    expect(res.status).toBe(200);
  });

  it("rejects a wrong password, an unknown user and a wrong client secret", async () => {
    const wrongPassword = await passwordGrant("cms-admin", "cms-creator");
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body.error).toBe("invalid_grant");

    const unknownUser = await passwordGrant("nobody", "nobody");
    expect(unknownUser.body.error).toBe("invalid_grant");

    const wrongSecret = await passwordGrant("cms-admin", "cms-admin", idp, "cms-server-dev-secret");
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.body.error).toBe("invalid_client");
  });

  it("does not allow the password grant for the public explorer client", async () => {
    const res = await postForm(url("token"), {
      client_id: "cms-explorer",
      grant_type: "password",
      username: "cms-admin",
      password: "cms-admin",
    });
    expect(res.status).toBe(400);
  });

  it("redeems the refresh token for a fresh access token with the same claims", async () => {
    const first = await passwordGrant("cms-creator", "cms-creator");
    const res = await postForm(url("token"), {
      client_id: "cms-server",
      client_secret: SECRET,
      grant_type: "refresh_token",
      refresh_token: first.body.refresh_token ?? "",
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as TokenResponse;
    expect(body.refresh_token).toEqual(expect.any(String));
    const { payload } = await verify(body.access_token ?? "");
    expect(payload).toMatchObject({
      sub: "cms-creator",
      azp: "cms-server",
      realm_access: { roles: ["creator"] },
      resource_access: { "cms-server": { roles: ["creator"] } },
    });
    expect(body.access_token).not.toBe(first.body.access_token);

    const bogus = await postForm(url("token"), {
      client_id: "cms-server",
      client_secret: SECRET,
      grant_type: "refresh_token",
      refresh_token: "not-a-refresh-token",
    });
    expect(((await bogus.json()) as TokenResponse).error).toBe("invalid_grant");
  });

  it("hands out refresh tokens as JWTs, as Keycloak does (seed §5.4), and redeems them; a tampered one is refused", async () => {
    const first = await passwordGrant("cms-creator", "cms-creator");
    const refresh = first.body.refresh_token ?? "";
    // Keycloak signs refresh tokens with a realm HMAC key (never in the JWKS) and types them "Refresh".
    expect(decodeProtectedHeader(refresh)).toMatchObject({ alg: "HS256", typ: "JWT" });
    const claims = decodeJwt(refresh);
    expect(claims).toMatchObject({
      iss: idp.issuer,
      aud: idp.issuer,
      sub: "cms-creator",
      azp: "cms-server",
      typ: "Refresh",
    });
    expect(claims.exp).toBe((claims.iat ?? 0) + 1800);
    expect(claims.jti).toEqual(expect.any(String));

    const redeem = (refreshToken: string) =>
      postForm(url("token"), {
        client_id: "cms-server",
        client_secret: SECRET,
        grant_type: "refresh_token",
        refresh_token: refreshToken,
      });
    const [header, , signature] = refresh.split(".") as [string, string, string];
    const raised = base64url.encode(JSON.stringify({ ...claims, sub: "cms-admin" }));
    expect(((await (await redeem(`${header}.${raised}.${signature}`)).json()) as TokenResponse).error).toBe(
      "invalid_grant",
    );
    expect(((await (await redeem(claims.jti as string)).json()) as TokenResponse).error).toBe("invalid_grant");

    const second = (await (await redeem(refresh)).json()) as TokenResponse;
    expect(decodeJwt(second.access_token ?? "")).toMatchObject({ sub: "cms-creator" });
    // The rotated refresh token is a JWT as well, and works in turn.
    expect(decodeJwt(second.refresh_token ?? "")).toMatchObject({ typ: "Refresh", sub: "cms-creator" });
    expect((await redeem(second.refresh_token ?? "")).status).toBe(200);
  });

  it("serves userinfo for its access tokens", async () => {
    const { body } = await passwordGrant("acme-editor", "acme-pw");
    const res = await fetch(url("userinfo"), { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      sub: "acme-editor",
      preferred_username: "acme-editor",
      tenants: ["acme"],
    });
    expect((await fetch(url("userinfo"))).status).toBe(401);
  });
});

describe("signing keys", () => {
  it("rotateKey activates a new kid and drops the old key from the JWKS", async () => {
    const own = await startIdp({ port: 0, clientSecret: SECRET, log: () => {} });
    try {
      const before = await passwordGrant("cms-admin", "cms-admin", own);
      const oldKid = decodeProtectedHeader(before.body.access_token ?? "").kid;
      expect(oldKid).toBe(own.kid);
      // A verifier that already cached the old JWKS (jose refetches on an unknown kid).
      const cached = createRemoteJWKSet(new URL(`${own.issuer}/protocol/openid-connect/certs`), {
        cooldownDuration: 0,
      });
      const options = { issuer: own.issuer, audience: "cms-server" };
      await jwtVerify(before.body.access_token ?? "", cached, options);

      await own.rotateKey();
      expect(own.kid).not.toBe(oldKid);

      const after = await passwordGrant("cms-admin", "cms-admin", own);
      expect(decodeProtectedHeader(after.body.access_token ?? "").kid).toBe(own.kid);
      await expect(jwtVerify(after.body.access_token ?? "", cached, options)).resolves.toBeDefined();
      await expect(verify(before.body.access_token ?? "", own)).rejects.toMatchObject({
        code: "ERR_JWKS_NO_MATCHING_KEY",
      });

      const { keys } = (await (await fetch(`${own.issuer}/protocol/openid-connect/certs`)).json()) as {
        keys: Array<{ kid: string }>;
      };
      expect(keys.map((k) => k.kid)).toEqual([own.kid]);

      // Refresh tokens survive the rotation and now yield tokens under the new key.
      const refreshed = await postForm(`${own.issuer}/protocol/openid-connect/token`, {
        client_id: "cms-server",
        client_secret: SECRET,
        grant_type: "refresh_token",
        refresh_token: before.body.refresh_token ?? "",
      });
      const refreshedBody = (await refreshed.json()) as TokenResponse;
      expect(decodeProtectedHeader(refreshedBody.access_token ?? "").kid).toBe(own.kid);
    } finally {
      await own.close();
    }
  });

  it("uses a provided signing key with its thumbprint as kid", async () => {
    const { privateKey } = await generateKeyPair("RS256", { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: "ignored" };
    const own = await startIdp({ port: 0, signingKey: jwk, accessTokenTtlSeconds: 60, log: () => {} });
    try {
      expect(own.kid).toBe(await calculateJwkThumbprint(jwk));
      const { body } = await passwordGrant("cms-consumer", "cms-consumer", own, "cms-server-dev-secret");
      expect(body.expires_in).toBe(60);
      const { protectedHeader } = await verify(body.access_token ?? "", own);
      expect(protectedHeader.kid).toBe(own.kid);
    } finally {
      await own.close();
    }
  });
});

/** Minimal cookie jar: the IdP's cookie names are unique per purpose, so paths can be ignored. */
class Browser {
  private readonly cookies = new Map<string, string>();

  async request(target: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const res = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }

  /** Follows redirects on the IdP; returns the first Location outside it (the app's redirect URI). */
  async follow(res: Response, from: string): Promise<string> {
    let current = res;
    let base = from;
    for (let hops = 0; hops < 10; hops++) {
      const location = current.headers.get("location");
      expect(current.status, await current.clone().text()).toBeGreaterThanOrEqual(300);
      expect(location).toBeTruthy();
      const next = new URL(location ?? "", base).href;
      if (!next.startsWith(idp.issuer)) return next;
      await current.body?.cancel();
      current = await this.request(next);
      base = next;
    }
    throw new Error("too many redirects");
  }
}

function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

function authorizeUrl(challenge?: string): string {
  const params = new URLSearchParams({
    client_id: "cms-explorer",
    response_type: "code",
    redirect_uri: REDIRECT_URI,
    scope: "openid",
    state: "state-123",
    ...(challenge ? { code_challenge: challenge, code_challenge_method: "S256" } : {}),
  });
  return `${url("auth")}?${params}`;
}

describe("authorization code + PKCE (cms-explorer)", () => {
  it("logs in through the form, checks the password and yields a JWT with roles", async () => {
    const browser = new Browser();
    const { verifier, challenge } = pkcePair();

    const start = await browser.request(authorizeUrl(challenge));
    expect(start.status).toBe(303);
    const loginUrl = new URL(start.headers.get("location") ?? "", url("auth")).href;
    expect(loginUrl).toMatch(/\/auth\/realms\/CMS\/login-actions\/[\w-]+$/);

    const form = await browser.request(loginUrl);
    expect(form.status).toBe(200);
    const html = await form.text();
    expect(html).toContain('id="kc-form-login"');
    expect(html).toContain('id="kc-login"');
    expect(html).toContain(`action="${new URL(loginUrl).pathname}"`);
    // The page names its users and roles; a password is shown only where it is the username (the defaults).
    expect(html).toMatch(/<code>cms-creator<\/code>[^<]*creator[^<]*password = username/);
    expect(html).toMatch(/<code>acme-editor<\/code>[^<]*creator, tenants acme/);
    expect(html).not.toContain("acme-pw");

    const formHeaders = { "content-type": "application/x-www-form-urlencoded" };
    const bad = await browser.request(loginUrl, {
      method: "POST",
      headers: formHeaders,
      body: new URLSearchParams({ username: '<img src=x onerror="alert(1)">', password: "wrong" }),
    });
    expect(bad.status).toBe(401);
    const badHtml = await bad.text();
    expect(badHtml).toContain("Invalid username or password.");
    expect(badHtml).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(badHtml).not.toContain("<img");

    const wrongPassword = await browser.request(loginUrl, {
      method: "POST",
      headers: formHeaders,
      body: new URLSearchParams({ username: "cms-creator", password: "cms-admin" }),
    });
    expect(wrongPassword.status).toBe(401);
    await wrongPassword.body?.cancel();

    const good = await browser.request(loginUrl, {
      method: "POST",
      headers: formHeaders,
      body: new URLSearchParams({ username: "cms-creator", password: "cms-creator" }),
    });
    const callback = new URL(await browser.follow(good, loginUrl));
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    expect(callback.searchParams.get("state")).toBe("state-123");
    expect(callback.searchParams.get("iss")).toBe(idp.issuer);
    const code = callback.searchParams.get("code") ?? "";
    expect(code).not.toBe("");

    const exchange = (codeVerifier: string) =>
      postForm(
        url("token"),
        {
          grant_type: "authorization_code",
          client_id: "cms-explorer",
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: codeVerifier,
        },
        { origin: APP_ORIGIN },
      );

    const wrongVerifier = await exchange(pkcePair().verifier);
    expect(wrongVerifier.status).toBe(400);
    expect(((await wrongVerifier.json()) as TokenResponse).error).toBe("invalid_grant");

    const ok = await exchange(verifier);
    expect(ok.status).toBe(200);
    // Swagger UI calls the token endpoint cross-origin from the app.
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const tokens = (await ok.json()) as TokenResponse;
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.id_token).toEqual(expect.any(String));
    const { payload, protectedHeader } = await verify(tokens.access_token ?? "");
    expect(protectedHeader).toMatchObject({ alg: "RS256", typ: "JWT", kid: idp.kid });
    expect(payload).toMatchObject({
      iss: idp.issuer,
      aud: "cms-server",
      sub: "cms-creator",
      azp: "cms-explorer",
      scope: "openid",
      preferred_username: "cms-creator",
      realm_access: { roles: ["creator"] },
      resource_access: { "cms-server": { roles: ["creator"] } },
    });

    // The code is single-use.
    expect((await exchange(verifier)).status).toBe(400);

    // The browser session is remembered: a second authorization skips the login form.
    const second = pkcePair();
    const again = await browser.request(authorizeUrl(second.challenge));
    const secondCallback = new URL(await browser.follow(again, url("auth")));
    expect(secondCallback.searchParams.get("code")).toBeTruthy();
  });

  it("requires PKCE and a registered redirect URI", async () => {
    const browser = new Browser();
    const noPkce = await browser.request(authorizeUrl());
    const location = new URL(noPkce.headers.get("location") ?? "", url("auth"));
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get("error")).toBe("invalid_request");

    const params = new URLSearchParams({
      client_id: "cms-explorer",
      response_type: "code",
      redirect_uri: "http://127.0.0.1:1/evil",
      scope: "openid",
      code_challenge: pkcePair().challenge,
      code_challenge_method: "S256",
    });
    const badRedirect = await browser.request(`${url("auth")}?${params}`);
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.headers.get("location")).toBeNull();
  });

  it("rejects a stale or foreign login page", async () => {
    const res = await fetch(`${idp.issuer}/login-actions/not-a-real-uid`);
    expect(res.status).toBe(400);
  });
});
