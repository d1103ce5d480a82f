// Minimal type shim for oidc-provider 9.x, which ships no types: only the surface the dev IdP uses.
// Kept ambient (no top-level import/export) so it declares the module instead of augmenting it.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  import type { JWK } from "jose";

  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    uid?: string;
    userCode?: string;
    consumed?: number;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Client {
    readonly clientId: string;
    readonly clientAuthMethod: string;
    readonly redirectUris: readonly string[];
    grantTypeAllowed(grantType: string): boolean;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: "opaque" | "jwt";
    jwt?: { sign?: { alg?: string } };
  }

  export interface OIDCContext {
    readonly params: Record<string, string | undefined>;
    readonly client: Client | undefined;
    readonly route: string;
  }

  export interface KoaContextWithOIDC {
    oidc: OIDCContext;
    /** Path inside the provider (the realm prefix already stripped by server.ts). */
    readonly path: string;
    body: unknown;
    type: string;
    status: number;
    host: string;
  }

  export interface TokenLike {
    accountId?: string;
    clientId?: string;
    kind?: string;
  }

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    grant_types?: string[];
    response_types?: string[];
    redirect_uris?: string[];
    post_logout_redirect_uris?: string[];
    token_endpoint_auth_method?: string;
    application_type?: "web" | "native";
    client_name?: string;
  }

  export interface Configuration {
    adapter?: (name: string) => Adapter;
    clients?: ClientMetadata[];
    jwks?: { keys: JWK[] };
    cookies?: { keys?: string[] };
    claims?: Record<string, string[]>;
    scopes?: string[];
    responseTypes?: string[];
    routes?: Record<string, string>;
    findAccount?: (ctx: KoaContextWithOIDC, id: string) => Promise<Account | undefined>;
    extraTokenClaims?: (ctx: KoaContextWithOIDC, token: TokenLike) => Promise<Record<string, unknown> | undefined>;
    issueRefreshToken?: (ctx: KoaContextWithOIDC, client: Client) => Promise<boolean> | boolean;
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: Client) => boolean;
    renderError?: (ctx: KoaContextWithOIDC, out: Record<string, string>, error: Error) => Promise<void>;
    interactions?: { url?: (ctx: KoaContextWithOIDC, interaction: { uid: string }) => Promise<string> | string };
    ttl?: Record<string, number | ((ctx: KoaContextWithOIDC, token: unknown, client?: Client) => number)>;
    formats?: {
      customizers?: {
        jwt?: (
          ctx: KoaContextWithOIDC,
          token: TokenLike,
          jwt: { header: Record<string, unknown> | undefined; payload: Record<string, unknown> },
        ) => Promise<void> | void;
      };
    };
    features?: Record<string, Record<string, unknown>>;
    [key: string]: unknown;
  }

  export interface InteractionDetails {
    uid: string;
    prompt: {
      name: string;
      reasons: string[];
      details: {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
    };
    params: Record<string, unknown>;
    grantId?: string;
    session?: { accountId?: string };
  }

  export interface InteractionResults {
    login?: { accountId: string };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
  }

  class GrantModel {
    constructor(init: { accountId: string; clientId: string });
    static find(id: string): Promise<GrantModel | undefined>;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  class ResourceServerModel {
    constructor(identifier: string, info: ResourceServerInfo);
  }

  class AccessTokenModel {
    constructor(init: {
      accountId: string;
      client: Client;
      grantId: string;
      gty: string;
      scope?: string;
      expiresWithSession?: boolean;
    });
    resourceServer: ResourceServerModel | undefined;
    scope: string | undefined;
    readonly expiration: number;
    readonly tokenType: string;
    save(): Promise<string>;
  }

  class RefreshTokenModel {
    constructor(init: {
      accountId: string;
      client: Client;
      grantId: string;
      gty: string;
      scope: string;
      resource: string;
      expiresWithSession?: boolean;
      rotations?: number;
    });
    readonly expiration: number;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    readonly Grant: typeof GrantModel;
    readonly AccessToken: typeof AccessTokenModel;
    readonly RefreshToken: typeof RefreshTokenModel;
    readonly ResourceServer: typeof ResourceServerModel;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    registerGrantType(name: string, handler: (ctx: KoaContextWithOIDC) => Promise<void>, params?: string[]): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    /** Koa middleware run before the provider's own routes. */
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
  }

  class OIDCProviderError extends Error {
    constructor(description?: string, detail?: string);
    readonly error: string;
    readonly error_description?: string;
    readonly status: number;
  }

  export const errors: {
    OIDCProviderError: typeof OIDCProviderError;
    InvalidGrant: typeof OIDCProviderError;
    InvalidScope: typeof OIDCProviderError;
    InvalidRequest: typeof OIDCProviderError;
    InvalidTarget: typeof OIDCProviderError;
    SessionNotFound: typeof OIDCProviderError;
  };

  export default Provider;
}
