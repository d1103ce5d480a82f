/**
 * The real dev identity provider and the real server with auth on, both on 127.0.0.1. The IdP's
 * signing key is generated here so tests can also forge tokens signed with the trusted key
 * (to prove the server checks iss, aud, exp… and not merely the signature).
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { type RunningIdp, startIdp } from "../../scripts/idp/server.js";
import { IN_PROCESS_ORIGIN } from "./in-process-fetch.js";
import { bindLoopback, startTestApp, type TestApp, type TestAppOptions } from "./test-app.js";

export const CLIENT_SECRET = "test-client-secret";
export const LINK_SECRET = "a-link-secret-of-at-least-32-characters!";

export interface AuthStack {
  idp: RunningIdp;
  app: TestApp;
  /** An access token from the password grant, exactly as a client would get one. */
  passwordToken(username: string, password?: string): Promise<string>;
  /** A token signed with the IdP's trusted key, with any claims/header the test wants. */
  forge(claims: Record<string, unknown>, header?: Record<string, unknown>): Promise<string>;
  trustedPrivateJwk: JWK;
  close(): Promise<void>;
}

export async function startAuthStack(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<AuthStack> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const trustedPrivateJwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(trustedPrivateJwk, "sha256");
  const idp = await startIdp({
    port: 0,
    clientSecret: CLIENT_SECRET,
    signingKey: trustedPrivateJwk,
    log: () => {},
    users: [
      { username: "acme-creator", password: "acme-creator", roles: ["creator"], tenants: ["acme"] },
      { username: "acme-admin", password: "acme-admin", roles: ["admin"], tenants: ["acme"] },
      { username: "no-roles", password: "no-roles", roles: [] },
    ],
  });
  // Signed links (built on CMS_PUBLIC_URL) must point at this very app: over a socket, one bound
  // up front (port 0); in-process, the in-process origin.
  const bound = options.transport === "in-process" ? undefined : await bindLoopback();
  const app = await startTestApp(
    {
      ...(bound ? { CMS_PORT: String(bound.port) } : {}),
      CMS_PUBLIC_URL: bound?.url ?? IN_PROCESS_ORIGIN,
      CMS_AUTH_ENABLED: "true",
      CMS_AUTH_ISSUER: idp.issuer,
      CMS_LINK_SECRET: LINK_SECRET,
      ...env,
    },
    { ...options, listenOn: bound },
  );
  return {
    idp,
    app,
    trustedPrivateJwk,
    passwordToken: (username, password = username) => passwordGrant(idp, CLIENT_SECRET, username, password),
    async forge(claims, header = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: idp.issuer,
        aud: "cms-server",
        sub: "forger",
        iat: now,
        exp: now + 300,
        typ: "Bearer",
        ...claims,
      })
        .setProtectedHeader({ alg: "RS256", typ: "JWT", kid, ...header })
        .sign(privateKey);
    },
    async close() {
      await app.close();
      await idp.close();
    },
  };
}

/** An access token from the dev IdP's password grant (client `cms-server`); throws with the IdP's answer if refused. */
export async function passwordGrant(
  idp: { issuer: string },
  clientSecret: string,
  username: string,
  password = username,
): Promise<string> {
  const res = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: "cms-server",
      client_secret: clientSecret,
      username,
      password,
      grant_type: "password",
    }),
  });
  if (!res.ok) throw new Error(`password grant for ${username} failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
