// startIdp(): a Keycloak-compatible development identity provider on a loopback address.
// Used by `npm run idp` and started in-process (port 0) by integration tests.
// First: it must run before oidc-provider is loaded (through ./provider.js).
import "./runtime-notice.js";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { JWK } from "jose";
import type Provider from "oidc-provider";
import { createSigningKey, type SigningJwk } from "./keys.js";
import { handleInteraction } from "./login.js";
import { createProvider, KEYCLOAK_ROUTES, REALM_PATH } from "./provider.js";
import { createMemoryStore } from "./store.js";
import { handleUserinfo, sendJson } from "./userinfo.js";
import { mergeUsers, type IdpUser } from "./users.js";

export { DEFAULT_USERS, type IdpUser } from "./users.js";
export { API_RESOURCE, EXPLORER_CLIENT_ID, KEYCLOAK_ROUTES, REALM_PATH } from "./provider.js";

export const DEFAULT_CLIENT_SECRET = "cms-server-dev-secret";
export const DEFAULT_APP_ORIGINS = ["http://127.0.0.1:9082"];
/** Paths (on every app origin) where the explorer receives the authorization code. */
export const DEFAULT_EXPLORER_REDIRECT_PATHS = ["/swagger-ui.html", "/docs", "/library"];
export const DEV_ONLY_WARNING =
  "WARNING: development identity provider. Its users and passwords (cms-admin, cms-creator, cms-consumer) " +
  "are for development only: never use them in production or on a reachable address.";

const LOGIN_ACTIONS = "/login-actions/";

export interface StartIdpOptions {
  /** Default 8080; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1; anything but a loopback address is refused. */
  host?: string;
  /** Origins of the CMS app whose API explorer redirects back (public client redirect URIs). */
  appOrigins?: string[];
  /** Paths appended to every app origin for the explorer's redirect URIs. */
  explorerRedirectPaths?: string[];
  /** Secret of the confidential client cms-server. */
  clientSecret?: string;
  /** Default 300 (Keycloak's default). */
  accessTokenTtlSeconds?: number;
  /** Default 1800 (Keycloak's SSO session idle). */
  refreshTokenTtlSeconds?: number;
  /** Private RSA JWK; generated at start when absent. Its kid is always the JWK thumbprint. */
  signingKey?: JWK;
  /** Added to the default users; one with a default's username replaces it. */
  users?: IdpUser[];
  /** Where the start-up lines go; default console.log. */
  log?: (line: string) => void;
}

export interface RunningIdp {
  issuer: string;
  port: number;
  /** kid of the active signing key. */
  readonly kid: string;
  close(): Promise<void>;
  /** Activates a new signing key (new kid); the old key leaves the JWKS. Sessions and refresh tokens survive. */
  rotateKey(): Promise<void>;
}

export async function startIdp(options: StartIdpOptions = {}): Promise<RunningIdp> {
  const host = options.host ?? "127.0.0.1";
  assertLoopback(host);
  const log = options.log ?? ((line: string) => console.log(line));
  const users = mergeUsers(options.users);
  const appOrigins = (options.appOrigins ?? DEFAULT_APP_ORIGINS).map(normalizeOrigin);
  const redirectPaths = options.explorerRedirectPaths ?? DEFAULT_EXPLORER_REDIRECT_PATHS;
  const store = createMemoryStore();
  // Random per process: a restarted IdP invalidates old browser sessions rather than misreading them.
  const cookieKeys = [randomBytes(32).toString("base64url")];
  const refreshTokenSecret = new Uint8Array(randomBytes(32));

  let signingKey: SigningJwk = await createSigningKey(options.signingKey);
  let issuer = "";
  let provider: Provider | undefined;
  let callback: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;

  const rebuild = (): void => {
    provider = createProvider({
      issuer,
      signingKey,
      cookieKeys,
      store,
      users,
      clientSecret: options.clientSecret ?? DEFAULT_CLIENT_SECRET,
      explorerRedirectUris: appOrigins.flatMap((origin) => redirectPaths.map((path) => `${origin}${path}`)),
      explorerPostLogoutRedirectUris: appOrigins.flatMap((origin) => [
        `${origin}/`,
        `${origin}/docs`,
        `${origin}/library`,
      ]),
      accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? 300,
      refreshTokenTtlSeconds: options.refreshTokenTtlSeconds ?? 1800,
      refreshTokenSecret,
      interactionPath: (uid) => `${REALM_PATH}${LOGIN_ACTIONS}${uid}`,
    });
    provider.on("server_error", (_ctx, error) => log(`idp server_error: ${String(error)}`));
    callback = provider.callback();
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? "/";
    const path = url.split("?", 1)[0] ?? "/";
    if (!provider || !callback || !(path === REALM_PATH || path.startsWith(`${REALM_PATH}/`))) {
      return sendJson(res, 404, { error: "not_found" });
    }
    const sub = path.slice(REALM_PATH.length);
    if (sub.startsWith(LOGIN_ACTIONS)) return handleInteraction(provider, users, req, res, path);
    if (sub === KEYCLOAK_ROUTES.userinfo) return handleUserinfo(req, res, { issuer, signingKey, users });
    // oidc-provider builds its absolute URLs from originalUrl minus url, i.e. the realm prefix.
    Object.assign(req, { originalUrl: url });
    req.url = url.slice(REALM_PATH.length) || "/";
    callback(req, res);
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      log(`idp error: ${String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: "server_error" });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8080, host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  const { port } = server.address() as AddressInfo;
  issuer = `http://${host.includes(":") ? `[${host}]` : host}:${port}${REALM_PATH}`;
  rebuild();
  log(DEV_ONLY_WARNING);

  return {
    issuer,
    port,
    get kid() {
      return signingKey.kid;
    },
    async rotateKey() {
      signingKey = await createSigningKey();
      rebuild();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          store.clear();
          if (error) reject(error);
          else resolve();
        });
        server.closeAllConnections(); // keep-alive sockets (fetch, browsers) would hold close() open
      }),
  };
}

/** Refuses anything that is not loopback: these credentials must never be reachable from the network. */
export function assertLoopback(host: string): void {
  const loopback = host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
  if (!loopback) {
    throw new Error(
      `dev IdP refuses to bind to ${JSON.stringify(host)}: only loopback hosts (127.0.0.1, ::1, localhost)`,
    );
  }
}

function normalizeOrigin(origin: string): string {
  const url = new URL(origin);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`app origin must be http(s): ${origin}`);
  return url.origin;
}
