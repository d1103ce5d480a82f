/**
 * The signed-in user when auth is on. /explorer.js (the explorer's own authorization code + PKCE
 * flow, loaded by the page) logs in and announces the session; this waits for it and reads the
 * token's claims: who the user is and which tenants the token allows.
 */

export interface Session {
  accessToken: string;
  user: string;
  /** The tenants the token's tenant claim lists (none: not confined, any tenant may be typed). */
  tenants: string[];
  /** The claim is there: the token is confined to `tenants`. */
  confined: boolean;
  /** The token carries the admin role where the server reads roles (auth/principal.ts). */
  admin: boolean;
}

/** Where the server reads roles: its client's roles, and the realm's when it counts them. */
export interface RoleSources {
  clientId: string;
  realmRoles: boolean;
}

interface ExplorerSession {
  accessToken: string;
}

declare global {
  interface Window {
    cmsExplorerSession?: ExplorerSession;
  }
}

function claimsOf(token: string): Record<string, unknown> {
  const payload = token.split(".")[1] ?? "";
  const json = atob(payload.replaceAll("-", "+").replaceAll("_", "/"));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
}

const rolesIn = (holder: unknown): unknown[] => {
  const roles = (holder as { roles?: unknown } | undefined)?.roles;
  return Array.isArray(roles) ? roles : [];
};

function isAdmin(claims: Record<string, unknown>, sources: RoleSources | null): boolean {
  if (!sources) return false;
  const access = claims.resource_access as Record<string, unknown> | undefined;
  const client = access && Object.hasOwn(access, sources.clientId) ? rolesIn(access[sources.clientId]) : [];
  const realm = sources.realmRoles ? rolesIn(claims.realm_access) : [];
  return [...client, ...realm].includes("admin");
}

function sessionOf(explorer: ExplorerSession, tenantClaim: string, sources: RoleSources | null): Session {
  const claims = claimsOf(explorer.accessToken);
  const listed = claims[tenantClaim];
  const list = typeof listed === "string" ? [listed] : Array.isArray(listed) ? listed : [];
  const tenants = list.filter((t): t is string => typeof t === "string");
  const user = String(claims.preferred_username ?? claims.sub ?? "");
  const confined = Object.hasOwn(claims, tenantClaim);
  return { accessToken: explorer.accessToken, user, tenants, confined, admin: isAdmin(claims, sources) };
}

/** Resolves once /explorer.js has a session (it may already have one, or redirect to the login instead). */
export function waitForSession(tenantClaim: string, sources: RoleSources | null): Promise<Session> {
  const now = window.cmsExplorerSession;
  if (now) return Promise.resolve(sessionOf(now, tenantClaim, sources));
  return new Promise((resolve) => {
    document.addEventListener(
      "cms-session",
      (event) => resolve(sessionOf((event as CustomEvent<ExplorerSession>).detail, tenantClaim, sources)),
      { once: true },
    );
  });
}
