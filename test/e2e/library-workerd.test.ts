/**
 * The media library suite (library-suite.ts) on workerd: the Worker bundled as for deployment (its
 * [build] step puts library.js into the assets), auth off, then auth on through the dev IdP.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { startIdp } from "../../scripts/idp/server.js";
import { CLIENT_SECRET, LINK_SECRET, passwordGrant } from "../helpers/auth-stack.js";
import { freePort } from "../helpers/test-app.js";
import { bundleWorker, startWorkerd, type WorkerBundle } from "../helpers/workerd.js";
import { describeLibrary } from "./library-suite.js";

const dir = await mkdtemp(join(tmpdir(), "cms-library-workerd-"));
let bundle: Promise<WorkerBundle> | undefined;
const bundled = () => (bundle ??= bundleWorker(join(dir, "bundle")));
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The Worker on a known port, so signed links (CMS_PUBLIC_URL) point at it. */
async function startWorker(bindings: Record<string, string>, port?: number) {
  port ??= await freePort();
  const server = await startWorkerd(await bundled(), {
    port,
    bindings: {
      CMS_PUBLIC_URL: `http://127.0.0.1:${port}`,
      CMS_LINK_SECRET: LINK_SECRET,
      CMS_LOG_LEVEL: "warn",
      CMS_QUOTA_BYTES: String(64 * 1024 * 1024),
      ...bindings,
    },
  });
  return { server, port };
}

describeLibrary("workerd-auth-off", async () => {
  const { server } = await startWorker({});
  return { baseUrl: server.url, tenant: "media", token: async () => null, user: null, close: () => server.close() };
});

describeLibrary("workerd-auth-on", async () => {
  const port = await freePort();
  const idp = await startIdp({
    port: 0,
    clientSecret: CLIENT_SECRET,
    appOrigins: [`http://127.0.0.1:${port}`],
    log: () => {},
    users: [
      { username: "lib-admin", password: "lib-admin", roles: ["admin", "creator"], tenants: ["studio", "press"] },
    ],
  });
  const { server } = await startWorker(
    { CMS_AUTH_ENABLED: "true", CMS_AUTH_ISSUER: idp.issuer, CMS_FETCH_ALLOW_PRIVATE: "true" },
    port,
  );
  let token: { at: number; value: Promise<string> } | undefined;
  return {
    baseUrl: server.url,
    tenant: "studio",
    token() {
      if (!token || Date.now() - token.at > 60_000) {
        token = { at: Date.now(), value: passwordGrant(idp, CLIENT_SECRET, "lib-admin", "lib-admin") };
      }
      return token.value;
    },
    user: { name: "lib-admin", issuer: idp.issuer },
    async close() {
      await server.close();
      await idp.close();
    },
  };
});
