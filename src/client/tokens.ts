/**
 * Token providers: where the client's bearer token comes from. A static token, or the password
 * grant against the configured identity provider, refreshed (refresh_token, else the grant again)
 * shortly before it expires.
 */
export type TokenProvider = () => Promise<string | undefined>;

export const staticToken =
  (token: string): TokenProvider =>
  async () =>
    token;

export interface PasswordGrantOptions {
  /** The issuer, e.g. `http://127.0.0.1:8080/auth/realms/CMS` (Keycloak's endpoint layout). */
  issuer: string;
  clientId: string;
  clientSecret?: string;
  username: string;
  password: string;
  fetch?: typeof fetch;
  /** Refresh this many seconds before expiry (default 30). */
  leewaySeconds?: number;
}

export interface TokenSet {
  access_token: string;
  expires_in?: number;
  refresh_token?: string;
}

/** POSTs a form to the provider's token endpoint; a refusal is an Error with its error_description. */
export async function requestToken(
  issuer: string,
  form: Record<string, string>,
  fetchFn: typeof fetch = fetch,
): Promise<TokenSet> {
  const res = await fetchFn(`${issuer.replace(/\/$/, "")}/protocol/openid-connect/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: new URLSearchParams(form),
  });
  const body = (await res.json().catch(() => ({}))) as Partial<TokenSet> & {
    error?: string;
    error_description?: string;
  };
  if (!res.ok || typeof body.access_token !== "string") {
    throw new Error(
      `token request refused (${res.status}): ${body.error_description ?? body.error ?? "no access_token"}`,
    );
  }
  return body as TokenSet;
}

export function passwordGrant(o: PasswordGrantOptions): TokenProvider {
  const client = { client_id: o.clientId, ...(o.clientSecret ? { client_secret: o.clientSecret } : {}) };
  const leewayMs = (o.leewaySeconds ?? 30) * 1000;
  let current: { set: TokenSet; expiresAt: number } | undefined;
  let pending: Promise<TokenSet> | undefined;

  const obtain = async (): Promise<TokenSet> => {
    if (current?.set.refresh_token) {
      try {
        return await requestToken(
          o.issuer,
          { ...client, grant_type: "refresh_token", refresh_token: current.set.refresh_token },
          o.fetch,
        );
      } catch {
        // the refresh token expired or was revoked: log in again below
      }
    }
    return requestToken(
      o.issuer,
      { ...client, grant_type: "password", username: o.username, password: o.password },
      o.fetch,
    );
  };

  return async () => {
    if (current && Date.now() < current.expiresAt - leewayMs) return current.set.access_token;
    // One request at a time, however many calls are waiting for a token.
    pending ??= obtain().finally(() => (pending = undefined));
    const set = await pending;
    current = { set, expiresAt: Date.now() + (set.expires_in ?? 300) * 1000 };
    return set.access_token;
  };
}
