/**
 * createApp(deps): the one Hono app every runtime serves. Pure: no environment, no I/O at build
 * time; runtime entry points (node.ts, later bun.ts and worker.ts) build the deps and serve it.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { methodNotAllowed } from "hono/method-not-allowed";
import type { Config } from "./config.js";
import type { AppEnv } from "./env.js";
import { ProblemError } from "./errors.js";
import { notFound, onError, onMethodNotAllowed, validationHook } from "./http-errors.js";
import type { IdGenerator } from "./lib/ids.js";
import type { Logger } from "./lib/logger.js";
import type { ResourceStore } from "./metadata/resource-store.js";
import { requestContext } from "./middleware/request-context.js";
import { type AssetReader, mountExplorer } from "./routes/explorer.js";
import { createMetaRouter } from "./routes/meta.js";
import { createResourceRouter } from "./routes/resources/router.js";
import type { FetchOrigin } from "./services/origin.js";
import { createResourceService } from "./services/resources.js";
import type { BlobStore } from "./storage/blob-store.js";

export interface AppDeps {
  config: Pick<Config, "CMS_MAX_RESOURCE_BYTES">;
  blobs: BlobStore;
  store: ResourceStore;
  fetchOrigin: FetchOrigin;
  newShortId: IdGenerator;
  clock: () => Date;
  logger: Logger;
  readAsset: AssetReader;
}

/** JSON request bodies carry metadata only; content arrives by URI (or, later, streamed uploads). */
const MAX_JSON_BODY_BYTES = 64 * 1024;

export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestContext(deps.logger));
  // Wraps everything after it: a known path with another method answers 405 + Allow, not 404.
  app.use(methodNotAllowed({ app, onMethodNotAllowed }));
  app.use(
    bodyLimit({
      maxSize: MAX_JSON_BODY_BYTES,
      onError: () => {
        throw new ProblemError("PAYLOAD_TOO_LARGE", `JSON request bodies are limited to ${MAX_JSON_BODY_BYTES} bytes`);
      },
    }),
  );
  app.onError(onError);
  app.notFound(notFound);

  const resources = createResourceService({
    blobs: deps.blobs,
    store: deps.store,
    fetchOrigin: deps.fetchOrigin,
    newShortId: deps.newShortId,
    clock: deps.clock,
    maxResourceBytes: deps.config.CMS_MAX_RESOURCE_BYTES,
  });

  app.route(
    "/",
    createMetaRouter([
      { name: "database", check: () => deps.store.ping() },
      { name: "storage", check: () => deps.blobs.check() },
    ]),
  );
  app.route("/", createResourceRouter(resources));
  mountExplorer(app, deps.readAsset);
  return app;
}

export type App = ReturnType<typeof createApp>;
