// Development users of the dev IdP and the Keycloak-style claims derived from them.
// Passwords equal the usernames: development only, never for production or a reachable address.
import { timingSafeEqual } from "node:crypto";

export interface IdpUser {
  username: string;
  password: string;
  /** Realm roles (`realm_access.roles`). */
  roles: string[];
  /** Client roles of the API client (`resource_access["cms-server"].roles`); defaults to `roles`. */
  clientRoles?: string[];
  /** Emitted as the `tenants` claim only when present. */
  tenants?: string[];
  email?: string;
  name?: string;
}

export const API_CLIENT_ID = "cms-server";

export const DEFAULT_USERS: readonly IdpUser[] = [
  { username: "cms-admin", password: "cms-admin", roles: ["admin"] },
  { username: "cms-creator", password: "cms-creator", roles: ["creator"] },
  { username: "cms-consumer", password: "cms-consumer", roles: ["consumer"] },
];

/** Defaults plus overrides; an override with a default's username replaces it. */
export function mergeUsers(overrides: readonly IdpUser[] = []): Map<string, IdpUser> {
  const users = new Map<string, IdpUser>();
  for (const user of [...DEFAULT_USERS, ...overrides]) users.set(user.username, user);
  return users;
}

export function checkPassword(user: IdpUser | undefined, password: string): boolean {
  if (!user) return false;
  const expected = Buffer.from(user.password);
  const given = Buffer.from(password);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Claims Keycloak puts into access tokens for this user (roles, username, tenants). */
export function accessTokenClaims(user: IdpUser): Record<string, unknown> {
  return {
    preferred_username: user.username,
    realm_access: { roles: [...user.roles] },
    resource_access: { [API_CLIENT_ID]: { roles: [...(user.clientRoles ?? user.roles)] } },
    ...(user.tenants ? { tenants: [...user.tenants] } : {}),
  };
}

/** Claims for the ID token and userinfo, by scope. */
export function profileClaims(user: IdpUser): Record<string, unknown> {
  return {
    sub: user.username,
    preferred_username: user.username,
    ...(user.name ? { name: user.name } : {}),
    ...(user.email ? { email: user.email, email_verified: true } : {}),
    ...(user.tenants ? { tenants: [...user.tenants] } : {}),
  };
}
