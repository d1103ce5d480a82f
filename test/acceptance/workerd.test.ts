/**
 * The HTTP acceptance suite on workerd: the Worker bundled exactly as for deployment (`wrangler
 * deploy --dry-run --outdir`), run by Miniflare on 127.0.0.1:0 with in-memory R2 and D1 bindings
 * and the assets directory, D1 migrated from drizzle/ first (test/helpers/workerd.ts).
 */
import { retryingReusedConnections, startBundledWorkerd } from "../helpers/workerd.js";
import { describeAcceptance, PUBLIC_URL, QUOTA_OVERRIDES } from "./suite.js";

describeAcceptance("workerd", async () => {
  const server = await startBundledWorkerd({
    bindings: {
      CMS_FETCH_ALLOW_PRIVATE: "true", // the test origin lives on 127.0.0.1
      CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!",
      CMS_LOG_LEVEL: "warn",
      CMS_PUBLIC_URL: PUBLIC_URL,
      CMS_QUOTA_OVERRIDES: QUOTA_OVERRIDES,
    },
  });
  return { baseUrl: server.url, close: () => server.close(), fetch: retryingReusedConnections };
});
