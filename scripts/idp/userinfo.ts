// Keycloak-style userinfo: accepts the JWT access tokens this IdP issues for cms-server.
// oidc-provider's own userinfo refuses access tokens that carry a resource-server audience.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createLocalJWKSet, jwtVerify } from "jose";
import { publicJwk, type SigningJwk } from "./keys.js";
import { API_CLIENT_ID, profileClaims, type IdpUser } from "./users.js";

export async function handleUserinfo(
  req: IncomingMessage,
  res: ServerResponse,
  context: { issuer: string; signingKey: SigningJwk; users: ReadonlyMap<string, IdpUser> },
): Promise<void> {
  if (req.method !== "GET" && req.method !== "POST") {
    res.setHeader("Allow", "GET, POST");
    return sendJson(res, 405, { error: "invalid_request", error_description: "method not allowed" });
  }
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (!match?.[1]) return unauthorized(res, "missing bearer token");
  try {
    const jwks = createLocalJWKSet({ keys: [publicJwk(context.signingKey)] });
    const { payload } = await jwtVerify(match[1], jwks, {
      issuer: context.issuer,
      audience: API_CLIENT_ID,
      algorithms: ["RS256"],
    });
    const user = typeof payload.sub === "string" ? context.users.get(payload.sub) : undefined;
    if (!user) return unauthorized(res, "unknown user");
    return sendJson(res, 200, profileClaims(user));
  } catch {
    return unauthorized(res, "token is invalid or expired");
  }
}

function unauthorized(res: ServerResponse, description: string): void {
  res.setHeader("WWW-Authenticate", `Bearer error="invalid_token", error_description="${description}"`);
  sendJson(res, 401, { error: "invalid_token", error_description: description });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Cache-Control", "no-store");
  res.end(JSON.stringify(body));
}
