/**
 * The node:http server of the Node and Bun entry points: @hono/node-server's adapter for the app,
 * with the cached-getData fast path in front of it. Not listening yet; the caller picks the address.
 */
import { createServer, type Server } from "node:http";
import { getRequestListener } from "@hono/node-server";
import type { App, AppDeps } from "../app.js";
import type { Config } from "../config.js";
import type { Logger } from "../lib/logger.js";
import type { Services } from "../services/index.js";
import { withFastGet } from "./fast-get.js";

export interface NodeServerParts {
  config: Pick<Config, "CMS_HOST" | "CMS_PUBLIC_READ">;
  deps: Pick<AppDeps, "verifier">;
  services: Services;
  logger: Logger;
  app: App;
}

export function createNodeServer({ config, deps, services, logger, app }: NodeServerParts): Server {
  const anonymousRead = deps.verifier === null || config.CMS_PUBLIC_READ;
  return createServer(withFastGet({ services, logger, anonymousRead }, getRequestListener(app.fetch, { hostname: config.CMS_HOST })));
}
