/**
 * Hono middleware: `authenticate` turns `Authorization: Bearer …` into `c.var.principal` (RFC 6750 §2.1),
 * `requireRole` guards routes by role. Failures are thrown as problems for the app's onError.
 */
import type { MiddlewareHandler } from "hono";
import { ProblemError } from "../problems.js";
import { ANONYMOUS_PRINCIPAL, type ClaimMapping, type Principal, principalFromClaims, type Role } from "./principal.js";
import { bearerChallenge, insufficientScope, type TokenVerifier } from "./verify-token.js";

export interface AuthEnv {
  Variables: { principal: Principal };
}

export type AuthenticateOptions = Omit<ClaimMapping, "clientId"> & { clientId?: string };

/** RFC 6750 §2.1: `Bearer 1*SP b64token`; the scheme is case-insensitive (RFC 9110 §11.1). */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** 401 without an error code: no credentials at all, or another scheme (RFC 6750 §3.1). */
const missingCredentials = () =>
  new ProblemError("UNAUTHENTICATED", "a bearer access token is required", {
    headers: { "www-authenticate": bearerChallenge() },
  });

/** 400 invalid_request: a malformed request rather than a bad token (RFC 6750 §3.1). */
const invalidRequest = (detail: string) =>
  new ProblemError("VALIDATION_FAILED", detail, {
    headers: { "www-authenticate": bearerChallenge("invalid_request", detail) },
  });

/** The bearer token of a request; throws the 401/400 problem when there is none or it is malformed. */
export function bearerToken(authorization: string | undefined, url: string): string {
  // RFC 6750 §2.3 (URI query) is optional and leaks tokens into logs and Referer: refused outright.
  if (new URL(url).searchParams.has("access_token")) {
    throw invalidRequest("access tokens are not accepted in the query string; use the Authorization header");
  }
  if (authorization === undefined) throw missingCredentials();
  const value = authorization.trim();
  const space = value.indexOf(" ");
  const scheme = space === -1 ? value : value.slice(0, space);
  if (scheme.toLowerCase() !== "bearer") throw missingCredentials();
  const token = space === -1 ? "" : value.slice(space + 1).replace(/^ +/, "");
  if (!B64TOKEN.test(token)) throw invalidRequest("the Authorization header must carry exactly one bearer token");
  return token;
}

/**
 * Sets `principal` for every later handler. `verifier === null` means auth is off: the anonymous
 * principal (every role, every tenant) and the Authorization header is not looked at.
 */
export function authenticate(
  verifier: TokenVerifier | null,
  options: AuthenticateOptions = {},
): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    if (verifier === null) {
      c.set("principal", ANONYMOUS_PRINCIPAL);
      return next();
    }
    const token = bearerToken(c.req.header("authorization"), c.req.url);
    const claims = await verifier.verify(token);
    c.set("principal", principalFromClaims(claims, { ...options, clientId: options.clientId ?? verifier.clientId }));
    return next();
  };
}

/** 403 `insufficient_scope` unless the principal holds `role` (roles are already closed under implication). */
export function requireRole(role: Role): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const principal = c.get("principal");
    // Mounted without authenticate(): a wiring bug, so fail closed and loudly.
    if (!principal) throw new ProblemError("INTERNAL", "authentication is not configured for this route");
    if (!principal.roles.has(role)) throw insufficientScope(`the ${role} role is required`);
    return next();
  };
}
