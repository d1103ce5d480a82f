/** The media library suite (library-suite.ts) on the Node server: auth off, then auth on through the dev IdP. */
import { type RunningIdp, startIdp } from "../../scripts/idp/server.js";
import { CLIENT_SECRET, passwordGrant } from "../helpers/auth-stack.js";
import { freePort, startTestApp } from "../helpers/test-app.js";
import { describeLibrary } from "./library-suite.js";

// A quota, so the usage bar has a limit to show.
const QUOTA = { CMS_QUOTA_BYTES: String(64 * 1024 * 1024) };

describeLibrary("node-auth-off", async () => {
  // A known port: CMS_PUBLIC_URL (signed links) defaults to it on loopback.
  const app = await startTestApp({ CMS_PORT: String(await freePort()), ...QUOTA });
  return { baseUrl: app.baseUrl, tenant: "media", token: async () => null, user: null, close: () => app.close() };
});

describeLibrary("node-auth-on", async () => {
  const port = await freePort();
  const idp: RunningIdp = await startIdp({
    port: 0,
    clientSecret: CLIENT_SECRET,
    appOrigins: [`http://127.0.0.1:${port}`],
    log: () => {},
    // An admin (purge is an admin's) confined to two tenants: the page offers exactly those.
    users: [
      { username: "lib-admin", password: "lib-admin", roles: ["admin", "creator"], tenants: ["studio", "press"] },
    ],
  });
  const app = await startTestApp({
    CMS_PORT: String(port),
    CMS_AUTH_ENABLED: "true",
    CMS_AUTH_ISSUER: idp.issuer,
    CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!",
    ...QUOTA,
  });
  // Password-grant tokens live minutes: a fresh one each minute outlasts the suite.
  let token: { at: number; value: Promise<string> } | undefined;
  return {
    baseUrl: app.baseUrl,
    tenant: "studio",
    token() {
      if (!token || Date.now() - token.at > 60_000) {
        token = { at: Date.now(), value: passwordGrant(idp, CLIENT_SECRET, "lib-admin", "lib-admin") };
      }
      return token.value;
    },
    user: { name: "lib-admin", issuer: idp.issuer },
    async close() {
      await app.close();
      await idp.close();
    },
  };
});
