/** The HTTP acceptance suite on Node: the app served in-process by @hono/node-server, fs + libSQL file. */
import { startTestApp } from "../helpers/test-app.js";
import { describeAcceptance, PUBLIC_URL, QUOTA_OVERRIDES } from "./suite.js";

describeAcceptance("node", async () => {
  const app = await startTestApp({
    CMS_LOG_LEVEL: "warn",
    CMS_PUBLIC_URL: PUBLIC_URL,
    CMS_QUOTA_OVERRIDES: QUOTA_OVERRIDES,
  });
  return { baseUrl: app.baseUrl, close: () => app.close() };
});
