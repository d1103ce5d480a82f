/**
 * What the media library suite (library-suite.ts) runs against: the Node server or the Worker on
 * workerd (bundled as for deployment: its [build] step puts library.js into the assets), with auth
 * off, or on through the dev IdP as an admin confined to two tenants. One file per runtime and mode
 * (library-<runtime>-<mode>.test.ts), so vitest's workers run them side by side: both runtimes with
 * auth on, and auth off once, on Node (what auth off changes is the page's and the server's, the same
 * on either runtime; what the runtime changes, auth on shows).
 */
import { startIdp } from "../../scripts/idp/server.js";
import { CLIENT_SECRET, LINK_SECRET, passwordGrant } from "../helpers/auth-stack.js";
import { freePort, startTestApp } from "../helpers/test-app.js";
import { startBundledWorkerd } from "../helpers/workerd.js";
import { type LibraryTarget, MAX_RESOURCE_BYTES } from "./library-suite.js";

export type AuthMode = "auth-off" | "auth-on";

/**
 * The server's settings besides auth: a quota, so the usage bar has a limit to show; a resource
 * limit a test can pass to see a refusal's error.
 */
const SETTINGS = {
  CMS_LINK_SECRET: LINK_SECRET,
  CMS_QUOTA_BYTES: String(64 * 1024 * 1024),
  CMS_MAX_RESOURCE_BYTES: String(MAX_RESOURCE_BYTES),
};
/** An admin (purge is an admin's) confined to two tenants: the page offers exactly those. */
const ADMIN = {
  username: "lib-admin",
  password: "lib-admin",
  roles: ["admin", "creator"],
  tenants: ["studio", "press"],
};
/** A creator in the admin's first tenant: owns what it makes, nothing else (the actions it is offered). */
const CREATOR = { username: "lib-creator", password: "lib-creator", roles: ["creator"], tenants: ["studio"] };

interface Served {
  baseUrl: string;
  close(): Promise<void>;
}
/** Starts a server on `port` (known up front: signed links, CMS_PUBLIC_URL, name it) with `env` added. */
type Serve = (port: number, env: Record<string, string>) => Promise<Served>;

async function startTarget(mode: AuthMode, serve: Serve, imageTransforms: boolean): Promise<LibraryTarget> {
  const port = await freePort();
  if (mode === "auth-off") {
    const server = await serve(port, {});
    return { ...server, tenant: "media", token: async () => null, user: null, creator: null, imageTransforms };
  }
  const idp = await startIdp({
    port: 0,
    clientSecret: CLIENT_SECRET,
    appOrigins: [`http://127.0.0.1:${port}`],
    log: () => {},
    users: [ADMIN, CREATOR],
  });
  const server = await serve(port, { CMS_AUTH_ENABLED: "true", CMS_AUTH_ISSUER: idp.issuer }).catch(
    async (err: unknown) => {
      await idp.close();
      throw err;
    },
  );
  // Password-grant tokens live minutes: a fresh one each minute outlasts the suite.
  let token: { at: number; value: Promise<string> } | undefined;
  return {
    baseUrl: server.baseUrl,
    tenant: ADMIN.tenants[0] as string,
    token() {
      if (!token || Date.now() - token.at > 60_000) {
        token = { at: Date.now(), value: passwordGrant(idp, CLIENT_SECRET, ADMIN.username, ADMIN.password) };
      }
      return token.value;
    },
    user: { name: ADMIN.username, issuer: idp.issuer },
    creator: {
      name: CREATOR.username,
      issuer: idp.issuer,
      token: () => passwordGrant(idp, CLIENT_SECRET, CREATOR.username, CREATOR.password),
    },
    imageTransforms,
    async close() {
      await server.close();
      await idp.close();
    },
  };
}

const serveNode: Serve = async (port, env) => {
  const app = await startTestApp({ CMS_PORT: String(port), ...SETTINGS, ...env });
  return { baseUrl: app.baseUrl, close: () => app.close() };
};

const serveWorkerd: Serve = async (port, env) => {
  const server = await startBundledWorkerd({
    port,
    bindings: {
      CMS_PUBLIC_URL: `http://127.0.0.1:${port}`,
      CMS_LOG_LEVEL: "warn",
      CMS_FETCH_ALLOW_PRIVATE: "true", // the dev IdP (its JWKS) lives on 127.0.0.1
      ...SETTINGS,
      ...env,
    },
  });
  return { baseUrl: server.url, close: () => server.close() };
};

// sharp on Node; workerd here has no Cloudflare Images binding, so no transforms (previews are the originals).
export const nodeTarget = (mode: AuthMode) => () => startTarget(mode, serveNode, true);
export const workerdTarget = (mode: AuthMode) => () => startTarget(mode, serveWorkerd, false);
