/**
 * The caller's principal: Keycloak client (optionally realm) roles → an implied role set, issuer + subject as its identity,
 * and an optional tenant confinement. Pure data and checks; no I/O, runtime-neutral.
 */
import { z } from "zod";
import { ProblemError } from "../problems.js";
import { insufficientScope, invalidToken } from "./verify-token.js";

export const ROLES = ["consumer", "creator", "admin"] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** `sub` of the token. null only when auth is off. */
  subject: string | null;
  /** `iss` of the token: with `subject`, the caller's identity (owner of what it creates, holder of its locks). */
  issuer: string | null;
  username?: string;
  /** Always closed under implication: admin ⊇ creator ⊇ consumer. */
  roles: ReadonlySet<Role>;
  /** Tenants this caller is confined to; null = unrestricted (no tenant claim, or auth off). */
  tenants: readonly string[] | null;
  anonymous: boolean;
}

export type Action = "read" | "create" | "modify";

export interface ClaimMapping {
  /** This server's client id: `resource_access[clientId].roles` counts as roles. */
  clientId: string;
  /** Claim holding the caller's tenants (a string or a list); default `tenants`. */
  tenantClaim?: string;
  /**
   * Also count `realm_access.roles`. Off by default: in a realm shared with other applications a realm
   * role named `admin` is someone else's admin, while client roles belong to this client alone.
   */
  realmRoles?: boolean;
}

export const DEFAULT_TENANT_CLAIM = "tenants";

/** Auth switched off: every role, every tenant, no owner. */
export const ANONYMOUS_PRINCIPAL: Principal = Object.freeze({
  subject: null,
  issuer: null,
  roles: new Set<Role>(ROLES),
  tenants: null,
  anonymous: true,
});

// Role lists are read leniently (a malformed or foreign entry just grants nothing); the subject and
// the tenant claim are read strictly, because getting them wrong would widen access.
const RoleList = z.object({ roles: z.array(z.unknown()) }).partial();
export const AccessClaimsSchema = z.object({
  iss: z.string().min(1),
  sub: z.string().min(1),
  preferred_username: z.string().optional().catch(undefined),
  realm_access: RoleList.optional().catch(undefined),
  resource_access: z.record(z.string(), z.unknown()).optional().catch(undefined),
});

const IMPLIED: Record<Role, readonly Role[]> = {
  admin: ["admin", "creator", "consumer"],
  creator: ["creator", "consumer"],
  consumer: ["consumer"],
};

const isRole = (value: unknown): value is Role =>
  typeof value === "string" && (ROLES as readonly string[]).includes(value);

function rolesFrom(list: readonly unknown[] | undefined, into: Set<Role>): void {
  for (const name of list ?? []) if (isRole(name)) for (const implied of IMPLIED[name]) into.add(implied);
}

function clientRoles(resourceAccess: Record<string, unknown> | undefined, clientId: string): unknown[] | undefined {
  if (!resourceAccess || !Object.hasOwn(resourceAccess, clientId)) return undefined;
  const parsed = RoleList.safeParse(resourceAccess[clientId]);
  return parsed.success ? parsed.data.roles : undefined;
}

/** A tenant claim is a string or a list of strings; anything else is refused, never read as "no limit". */
function tenantsFrom(claims: Record<string, unknown>, claim: string): string[] | null {
  if (!Object.hasOwn(claims, claim)) return null;
  const value = claims[claim];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || !list.every((t): t is string => typeof t === "string" && t.length > 0)) {
    throw invalidToken(`malformed ${claim} claim`);
  }
  return [...new Set(list)];
}

/** Builds the principal from verified access-token claims; throws the 401 problem on a bad `sub`/tenant claim. */
export function principalFromClaims(claims: Record<string, unknown>, mapping: ClaimMapping): Principal {
  const parsed = AccessClaimsSchema.safeParse(claims);
  if (!parsed.success) throw invalidToken("missing or malformed iss or sub claim");
  const { iss, sub, preferred_username, realm_access, resource_access } = parsed.data;
  const roles = new Set<Role>();
  if (mapping.realmRoles) rolesFrom(realm_access?.roles, roles);
  rolesFrom(clientRoles(resource_access, mapping.clientId), roles);
  return {
    subject: sub,
    issuer: iss,
    ...(preferred_username ? { username: preferred_username } : {}),
    roles,
    tenants: tenantsFrom(claims, mapping.tenantClaim ?? DEFAULT_TENANT_CLAIM),
    anonymous: false,
  };
}

export const hasRole = (principal: Principal, role: Role): boolean => principal.roles.has(role);

// ---- identity: the one place where owners and lock holders are compared ----

/** How a resource records its owner: the creating token's subject and issuer (both null with auth off). */
export interface Ownership {
  owner: string | null;
  ownerIssuer: string | null;
}

export const ownershipOf = (principal: Principal): Ownership => ({
  owner: principal.subject,
  ownerIssuer: principal.issuer,
});

/**
 * Same issuer and same subject: a `sub` is unique only within its issuer, so another identity
 * provider's "alice" is someone else. Nobody owns a row without an owner (created with auth off).
 */
export const isOwner = (principal: Principal, row: Ownership): boolean =>
  principal.subject !== null && row.owner === principal.subject && row.ownerIssuer === principal.issuer;

/** The lock holder recorded for a principal: issuer and subject in one unambiguous string; null with auth off. */
export const holderOf = (principal: Principal): string | null =>
  principal.subject === null ? null : JSON.stringify([principal.issuer, principal.subject]);

/** read: consumer; create: creator; modify (update/lock/delete): admin on anything, creator on its own. */
export function can(principal: Principal, action: Action, row?: Ownership): boolean {
  switch (action) {
    case "read":
      return principal.roles.has("consumer");
    case "create":
      return principal.roles.has("creator");
    case "modify":
      if (principal.roles.has("admin")) return true;
      return principal.roles.has("creator") && row !== undefined && isOwner(principal, row);
  }
}

const ROLE_FOR: Record<Action, Role> = { read: "consumer", create: "creator", modify: "creator" };

/** `can` or throw 403: `insufficient_scope` (RFC 6750 §3.1) when a role is missing, plain 403 for ownership. */
export function assertCan(principal: Principal, action: Action, row?: Ownership): void {
  if (can(principal, action, row)) return;
  if (!principal.roles.has(ROLE_FOR[action])) throw insufficientScope(`the ${ROLE_FOR[action]} role is required`);
  throw new ProblemError("FORBIDDEN", "only the owner or an admin may modify this resource");
}

/** Tenant confinement: a caller with a tenant claim may only touch those tenants. */
const inTenant = (principal: Principal, tenantId: string): boolean =>
  principal.tenants === null || principal.tenants.includes(tenantId);

export function assertTenant(principal: Principal, tenantId: string): void {
  if (inTenant(principal, tenantId)) return;
  throw new ProblemError("FORBIDDEN", "this token is not valid for the requested tenant");
}

/**
 * The same confinement for something that spans tenants (a webhook subscription's filter), where
 * an empty list means every tenant: each listed one must be the caller's, and every tenant only an
 * unconfined caller's.
 */
export const coversTenants = (principal: Principal, tenants: readonly string[]): boolean =>
  tenants.length === 0 ? principal.tenants === null : tenants.every((t) => inTenant(principal, t));

export function assertTenants(principal: Principal, tenants: readonly string[]): void {
  if (coversTenants(principal, tenants)) return;
  throw new ProblemError(
    "FORBIDDEN",
    tenants.length === 0
      ? "this token is confined to tenants: every tenant needs a token without a tenant claim"
      : "this token is not valid for the requested tenant",
  );
}
