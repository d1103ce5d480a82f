// Refresh tokens as Keycloak hands them out (the seed calls them "a refresh JWT"): an HS256 JWT typed
// "Refresh", signed with a per-process HMAC secret that is never published (Keycloak uses a realm
// HMAC key), so no access-token verifier can mistake one for an access token. oidc-provider's own
// refresh tokens are opaque: the JWT carries that opaque value as `jti`, wrapped on the way out of the
// token endpoint and unwrapped when oidc-provider looks a refresh token up in its store.
import { jwtVerify, SignJWT } from "jose";
import type { Adapter } from "oidc-provider";

const COMPACT_JWS = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** What the token endpoint knows about the opaque refresh token it just issued. */
export interface RefreshTokenFacts {
  jti: string;
  accountId: string;
  clientId: string;
  iat: number;
  exp: number;
  scope?: string;
}

export interface RefreshJwt {
  /** The JWT handed out for an opaque refresh token (a value that already is one is returned as is). */
  wrap(facts: RefreshTokenFacts): Promise<string>;
  /** The opaque id inside a genuine refresh JWT of this issuer; undefined for anything else, raw ids included. */
  unwrap(value: string): Promise<string | undefined>;
  /** `adapter` with `find` taking the JWT, so every lookup (refresh grant, revocation, introspection) accepts it. */
  adapter(base: Adapter): Adapter;
}

export const isCompactJws = (value: string): boolean => COMPACT_JWS.test(value);

export function createRefreshJwt(issuer: string, secret: Uint8Array): RefreshJwt {
  const unwrap = async (value: string) => {
    if (!isCompactJws(value)) return undefined;
    try {
      const { payload } = await jwtVerify(value, secret, {
        issuer,
        audience: issuer,
        algorithms: ["HS256"],
        typ: "JWT",
      });
      return payload.typ === "Refresh" && typeof payload.jti === "string" ? payload.jti : undefined;
    } catch {
      return undefined; // tampered, expired or foreign: the grant answers invalid_grant
    }
  };
  return {
    wrap: (facts) =>
      new SignJWT({ typ: "Refresh", azp: facts.clientId, ...(facts.scope ? { scope: facts.scope } : {}) })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer(issuer)
        .setAudience(issuer)
        .setSubject(facts.accountId)
        .setJti(facts.jti)
        .setIssuedAt(facts.iat)
        .setExpirationTime(facts.exp)
        .sign(secret),
    unwrap,
    adapter: (base) => ({
      ...base,
      async find(value) {
        const id = await unwrap(value);
        return id === undefined ? undefined : base.find(id);
      },
    }),
  };
}
