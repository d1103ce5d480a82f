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

function sessionOf(explorer: ExplorerSession, tenantClaim: string): Session {
  const claims = claimsOf(explorer.accessToken);
  const listed = claims[tenantClaim];
  const tenants = Array.isArray(listed) ? listed.filter((t): t is string => typeof t === "string") : [];
  const user = String(claims.preferred_username ?? claims.sub ?? "");
  return { accessToken: explorer.accessToken, user, tenants };
}

/** Resolves once /explorer.js has a session (it may already have one, or redirect to the login instead). */
export function waitForSession(tenantClaim: string): Promise<Session> {
  const now = window.cmsExplorerSession;
  if (now) return Promise.resolve(sessionOf(now, tenantClaim));
  return new Promise((resolve) => {
    document.addEventListener(
      "cms-session",
      (event) => resolve(sessionOf((event as CustomEvent<ExplorerSession>).detail, tenantClaim)),
      { once: true },
    );
  });
}
