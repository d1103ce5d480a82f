/**
 * createApp(deps): the one Hono app every runtime serves. Pure: no environment, no I/O at build
 * time; runtime entry points (node.ts, bun.ts, later worker.ts) build the deps and serve it.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { methodNotAllowed } from "hono/method-not-allowed";
import { createGuards } from "./auth/guards.js";
import type { LinkSigner } from "./auth/signed-links.js";
import type { TokenVerifier } from "./auth/verify-token.js";
import type { Config } from "./config.js";
import type { AppEnv } from "./env.js";
import { ProblemError } from "./errors.js";
import { notFound, onError, onMethodNotAllowed, validationHook } from "./http-errors.js";
import type { IdGenerator } from "./lib/ids.js";
import type { Logger } from "./lib/logger.js";
import type { ResourceStore } from "./metadata/resource-store.js";
import { requestContext } from "./middleware/request-context.js";
import { type AssetReader, mountExplorer } from "./routes/explorer/index.js";
import { createMetaRouter } from "./routes/meta.js";
import { createResourceRouter } from "./routes/resources/router.js";
import type { FetchOrigin } from "./services/origin.js";
import { createResourceService } from "./services/resources.js";
import type { BlobStore } from "./storage/blob-store.js";

export type AppConfig = Pick<
  Config,
  | "CMS_MAX_RESOURCE_BYTES"
  | "CMS_AUTH_ENABLED"
  | "CMS_AUTH_ISSUER"
  | "CMS_AUTH_EXPLORER_CLIENT_ID"
  | "CMS_AUTH_TENANT_CLAIM"
  | "CMS_PUBLIC_READ"
  | "CMS_PUBLIC_URL"
>;

export interface AppDeps {
  config: AppConfig;
  blobs: BlobStore;
  store: ResourceStore;
  fetchOrigin: FetchOrigin;
  /** null when auth is off (CMS_AUTH_ENABLED=false). */
  verifier: TokenVerifier | null;
  links: LinkSigner;
  newShortId: IdGenerator;
  clock: () => Date;
  logger: Logger;
  readAsset: AssetReader;
}

/** JSON request bodies carry metadata only; content arrives by URI (or, later, streamed uploads). */
const MAX_JSON_BODY_BYTES = 64 * 1024;

export function createApp(deps: AppDeps) {
  const { config } = deps;
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestContext(deps.logger));
  // Wraps everything after it: a known path with another method answers 405 + Allow, not 404.
  app.use(methodNotAllowed({ app, onMethodNotAllowed }));
  // Bearer tokens are not ambient credentials, so any origin may call the API (as the anchor allowed).
  app.use(
    cors({
      origin: "*",
      allowHeaders: ["Authorization", "Content-Type", "Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Range", "X-Request-Id"],
      exposeHeaders: ["Location", "ETag", "Content-Range", "Content-Disposition", "Accept-Ranges", "WWW-Authenticate", "X-Request-Id"],
      maxAge: 600,
    }),
  );
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

  const guards = createGuards({
    verifier: deps.verifier,
    tenantClaim: config.CMS_AUTH_TENANT_CLAIM,
    links: deps.links,
    publicRead: config.CMS_PUBLIC_READ,
    clock: deps.clock,
  });
  const resources = createResourceService({
    blobs: deps.blobs,
    store: deps.store,
    fetchOrigin: deps.fetchOrigin,
    newShortId: deps.newShortId,
    clock: deps.clock,
    maxResourceBytes: config.CMS_MAX_RESOURCE_BYTES,
  });

  const readiness = [
    { name: "database", check: () => deps.store.ping() },
    { name: "storage", check: () => deps.blobs.check() },
  ];
  app.route("/", createMetaRouter(readiness, guards));
  app.route(
    "/",
    createResourceRouter({ resources, guards, links: deps.links, clock: deps.clock, publicUrl: config.CMS_PUBLIC_URL }),
  );
  mountExplorer(app, deps.readAsset, {
    issuer: config.CMS_AUTH_ENABLED ? config.CMS_AUTH_ISSUER : undefined,
    clientId: config.CMS_AUTH_EXPLORER_CLIENT_ID,
  });
  return app;
}

export type App = ReturnType<typeof createApp>;
