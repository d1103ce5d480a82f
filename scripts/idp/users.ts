// Development users of the dev IdP and the Keycloak-style claims derived from them.
// Passwords equal the usernames: development only, never for production or a reachable address.
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";

const names = z.array(z.string().min(1));

export const IdpUserSchema = z
  .object({
    username: z.string().min(1),
    password: z.string().min(1),
    /** Realm roles (`realm_access.roles`). */
    roles: names,
    /** Client roles of the API client (`resource_access["cms-server"].roles`); defaults to `roles`. */
    clientRoles: names.optional(),
    /** Emitted as the `tenants` claim only when present. */
    tenants: names.optional(),
    email: z.string().optional(),
    name: z.string().optional(),
  })
  .strict();

export type IdpUser = z.infer<typeof IdpUserSchema>;

/**
 * The users file of `npm run idp` (CMS_IDP_USERS): a JSON list of users; one with a default's
 * username replaces it. Throws one line naming the setting and the first bad field.
 */
export function parseUsersFile(text: string, file: string): IdpUser[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`CMS_IDP_USERS (${file}) is not JSON`);
  }
  const parsed = z.array(IdpUserSchema).safeParse(json);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const at = issue?.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") ?? "";
  throw new Error(`CMS_IDP_USERS (${file}): ${at || "the file"} ${issue?.message ?? "is invalid"}`);
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
