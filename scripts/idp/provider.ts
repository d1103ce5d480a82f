// oidc-provider configured as a Keycloak look-alike: realm paths, clients, JWT access tokens, password grant.
// Rebuilt on key rotation (its keystore is fixed at construction); state lives in the shared MemoryStore.
import Provider, { type Adapter, errors, type Configuration, type KoaContextWithOIDC } from "oidc-provider";
import { escapeHtml, page } from "./html.js";
import type { SigningJwk } from "./keys.js";
import { createRefreshJwt, isCompactJws, type RefreshJwt } from "./refresh-jwt.js";
import type { MemoryStore } from "./store.js";
import { accessTokenClaims, API_CLIENT_ID, checkPassword, profileClaims, type IdpUser } from "./users.js";

export const REALM_PATH = "/auth/realms/CMS";
export const EXPLORER_CLIENT_ID = "cms-explorer";
/** Resource indicators must be absolute URIs (else invalid_target); the JWT `aud` stays the client id. */
export const API_RESOURCE = "urn:cms-server";
export const SUPPORTED_SCOPES = ["openid", "profile", "email"] as const;

/** Keycloak endpoint paths, relative to the issuer. */
export const KEYCLOAK_ROUTES = {
  authorization: "/protocol/openid-connect/auth",
  token: "/protocol/openid-connect/token",
  jwks: "/protocol/openid-connect/certs",
  userinfo: "/protocol/openid-connect/userinfo",
  end_session: "/protocol/openid-connect/logout",
  revocation: "/protocol/openid-connect/revoke",
  introspection: "/protocol/openid-connect/token/introspect",
} as const;

export interface ProviderSettings {
  issuer: string;
  signingKey: SigningJwk;
  cookieKeys: string[];
  store: MemoryStore;
  users: ReadonlyMap<string, IdpUser>;
  clientSecret: string;
  explorerRedirectUris: string[];
  explorerPostLogoutRedirectUris: string[];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** HMAC key of the refresh JWTs; kept across rebuilds (key rotation) so refresh tokens survive it. */
  refreshTokenSecret: Uint8Array;
  /** Absolute path of the login page for an interaction uid. */
  interactionPath(uid: string): string;
}

export function createProvider(settings: ProviderSettings): Provider {
  const { users, accessTokenTtlSeconds } = settings;
  const resourceServer = {
    scope: SUPPORTED_SCOPES.join(" "),
    audience: API_CLIENT_ID,
    accessTokenFormat: "jwt" as const,
    accessTokenTTL: accessTokenTtlSeconds,
    jwt: { sign: { alg: "RS256" } },
  };
  const corsOrigins = new Set(settings.explorerRedirectUris.map((uri) => new URL(uri).origin));
  const refreshJwt = createRefreshJwt(settings.issuer, settings.refreshTokenSecret);

  const configuration: Configuration = {
    adapter: (model: string) =>
      model === "RefreshToken"
        ? refreshJwt.adapter(settings.store.adapterFor(model))
        : settings.store.adapterFor(model),
    jwks: { keys: [settings.signingKey] },
    cookies: { keys: settings.cookieKeys },
    clients: [
      {
        client_id: API_CLIENT_ID,
        client_secret: settings.clientSecret,
        // Keycloak accepts the secret in the body or as Basic auth; oidc-provider accepts both for either method.
        token_endpoint_auth_method: "client_secret_basic",
        grant_types: ["password", "refresh_token"],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: EXPLORER_CLIENT_ID,
        client_name: "CMS API explorer",
        application_type: "web",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: settings.explorerRedirectUris,
        post_logout_redirect_uris: settings.explorerPostLogoutRedirectUris,
      },
    ],
    claims: {
      openid: ["sub"],
      profile: ["preferred_username", "name", "tenants"],
      email: ["email", "email_verified"],
    },
    // Only what the password grant accepts too; the library's default also advertises offline_access.
    scopes: ["openid"],
    responseTypes: ["code"],
    routes: { ...KEYCLOAK_ROUTES },
    pkce: { required: () => true },
    findAccount: async (_ctx, id) => {
      const user = users.get(id);
      return user && { accountId: id, claims: () => profileClaims(user) };
    },
    extraTokenClaims: async (_ctx, token) => {
      const user = token.accountId ? users.get(token.accountId) : undefined;
      if (!user) return undefined;
      return { ...accessTokenClaims(user), azp: token.clientId, typ: "Bearer" };
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    clientBasedCORS: (_ctx, origin) => corsOrigins.has(origin),
    interactions: { url: (_ctx, interaction) => settings.interactionPath(interaction.uid) },
    ttl: {
      AccessToken: accessTokenTtlSeconds,
      IdToken: accessTokenTtlSeconds,
      AuthorizationCode: 60,
      RefreshToken: settings.refreshTokenTtlSeconds,
      Interaction: 10 * 60,
      Session: 10 * 60 * 60,
      Grant: 10 * 60 * 60,
    },
    formats: {
      customizers: {
        // Keycloak's access-token header says typ "JWT" (not RFC 9068's "at+jwt"); match it so a
        // verifier written against this IdP also accepts real Keycloak tokens.
        jwt: (_ctx, _token, jwt) => {
          jwt.header = { ...jwt.header, typ: "JWT" };
        },
      },
    },
    renderError: async (ctx, out) => {
      ctx.type = "html";
      ctx.body = page(
        "Error",
        Object.entries(out)
          .map(([key, value]) => `<p><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</p>`)
          .join(""),
      );
    },
    features: {
      devInteractions: { enabled: false },
      introspection: {
        enabled: true,
        allowedPolicy: (_ctx: KoaContextWithOIDC, client: { clientAuthMethod: string }) =>
          client.clientAuthMethod !== "none",
      },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx: KoaContextWithOIDC, client: { clientId: string }, token: { clientId?: string }) =>
          token.clientId === client.clientId,
      },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContextWithOIDC, form: string) => {
          ctx.body = page(
            "Sign out",
            `${form}<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout" id="kc-logout">Sign out</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx: KoaContextWithOIDC) => {
          ctx.body = page("Signed out", "<p>You are signed out.</p>");
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => API_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, indicator: string) => {
          if (indicator !== API_RESOURCE) throw new errors.InvalidTarget();
          return resourceServer;
        },
      },
    },
  };

  const provider = new Provider(settings.issuer, configuration);
  registerPasswordGrant(provider, users, resourceServer);
  provider.use(refreshTokensAsJwts(refreshJwt, settings.store.adapterFor("RefreshToken")));
  return provider;
}

/**
 * Keycloak's direct access grant. oidc-provider has no built-in `password` grant, and its internal
 * grant helpers are not exported, so this builds the grant and tokens from the public models.
 */
function registerPasswordGrant(
  provider: Provider,
  users: ReadonlyMap<string, IdpUser>,
  resourceServer: ConstructorParameters<typeof provider.ResourceServer>[1],
): void {
  provider.registerGrantType(
    "password",
    async (ctx) => {
      const { client, params } = ctx.oidc;
      if (!client) throw new errors.InvalidRequest("client authentication required");
      const username = params.username ?? "";
      if (!checkPassword(users.get(username), params.password ?? "")) {
        throw new errors.InvalidGrant("Invalid user credentials");
      }
      const scope = passwordGrantScope(params.scope);

      const grant = new provider.Grant({ accountId: username, clientId: client.clientId });
      grant.addOIDCScope(scope);
      grant.addResourceScope(API_RESOURCE, scope);
      const grantId = await grant.save();

      const at = new provider.AccessToken({ accountId: username, client, grantId, gty: "password", scope });
      at.resourceServer = new provider.ResourceServer(API_RESOURCE, resourceServer);
      const accessToken = await at.save();

      // The built-in refresh_token grant redeems this: it re-resolves the resource and re-runs extraTokenClaims.
      const rt = new provider.RefreshToken({
        accountId: username,
        client,
        grantId,
        gty: "password",
        scope,
        resource: API_RESOURCE,
        rotations: 0,
        expiresWithSession: false,
      });
      const refreshToken = await rt.save();

      ctx.body = {
        access_token: accessToken,
        expires_in: at.expiration,
        refresh_expires_in: rt.expiration,
        refresh_token: refreshToken,
        token_type: at.tokenType,
        scope,
      };
    },
    ["username", "password", "scope"],
  );
}

/** Token endpoint answers carry the refresh token as a JWT (the password grant's, and a rotated one). */
function refreshTokensAsJwts(refreshJwt: RefreshJwt, store: Adapter): Parameters<Provider["use"]>[0] {
  // Works on the response, since oidc-provider reads the request body itself.
  return async (ctx, next) => {
    await next();
    if (ctx.path !== KEYCLOAK_ROUTES.token) return;
    const body = ctx.body as Record<string, unknown> | undefined;
    const opaque = body?.refresh_token;
    if (typeof opaque !== "string" || isCompactJws(opaque)) return; // none, or the JWT that was redeemed
    const { accountId, clientId, iat, exp, scope } = (await store.find(opaque)) ?? {};
    if (
      typeof accountId !== "string" ||
      typeof clientId !== "string" ||
      typeof iat !== "number" ||
      typeof exp !== "number"
    ) {
      throw new Error("a refresh token just issued is not in the store");
    }
    const facts = { jti: opaque, accountId, clientId, iat, exp, ...(typeof scope === "string" ? { scope } : {}) };
    ctx.body = { ...body, refresh_token: await refreshJwt.wrap(facts) };
  };
}

/** Like Keycloak: "profile email" by default, "openid" only when asked for; unknown scopes are refused. */
function passwordGrantScope(requested: string | undefined): string {
  const scopes = new Set(["profile", "email", ...(requested?.split(" ").filter(Boolean) ?? [])]);
  const unknown = [...scopes].filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new errors.InvalidScope("requested scope is not supported", unknown.join(" "));
  return SUPPORTED_SCOPES.filter((s) => scopes.has(s)).join(" ");
}
