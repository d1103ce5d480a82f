/**
 * createApp(deps): the one Hono app every runtime serves. Pure: no environment, no I/O at build
 * time; runtime entry points (node.ts, bun.ts, worker.ts) build the deps and serve it.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { methodNotAllowed } from "hono/method-not-allowed";
import { createGuards } from "./auth/guards.js";
import type { AppDeps } from "./app-deps.js";
import type { AppEnv } from "./http/app-env.js";
import { notFound, onError, onMethodNotAllowed, validationHook } from "./http/problem-handlers.js";
import { API_CORS, cors } from "./http/middleware/cors.js";
import { headContentLength } from "./http/middleware/head-length.js";
import { requestContext } from "./http/middleware/request-context.js";
import { explorerAuth, mountExplorer } from "./routes/explorer/index.js";
import { mountLibrary, uploadOrigins } from "./routes/library/index.js";
import { PREVIEW_PRESET } from "./images/params.js";
import { createContentRouter } from "./routes/content/router.js";
import { createFindingRouter } from "./routes/finding/router.js";
import { createLifecycleRouter } from "./routes/lifecycle/router.js";
import { createLockRouter } from "./routes/locks/router.js";
import { createMetaRouter } from "./routes/meta.js";
import { createResourceRouter } from "./routes/resources/router.js";
import { createTusRouter } from "./routes/tus/router.js";
import { createDirectRouter } from "./routes/direct/router.js";
import { createUploadRouter } from "./routes/uploads/router.js";
import { createTenantRouter } from "./routes/tenants/router.js";
import { createUsageRouter } from "./routes/usage/router.js";
import { createWebhookRouter } from "./routes/webhooks/router.js";
import { createServices, type Services } from "./services/index.js";

export type { AppDeps, AppOptions } from "./app-deps.js";

export function createApp(deps: AppDeps, services: Services = createServices(deps)) {
  const { options } = deps;
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestContext(deps.logger, deps.metrics.enabled ? deps.metrics : undefined));
  // Wraps everything after it: a known path with another method answers 405 + Allow, not 404.
  app.use(methodNotAllowed({ app, onMethodNotAllowed }));
  app.use(cors(API_CORS));
  app.use(headContentLength());
  // Body limits and request digests are each route's own policy, bound beside its guard (routes/router.ts).
  app.onError(onError);
  app.notFound(notFound);

  // Without auth there is no verifier: every request is anonymous, and the token settings go unused.
  const guards = createGuards({
    verifier: deps.verifier,
    tenantClaim: options.auth?.tenantClaim ?? "",
    realmRoles: options.auth?.realmRoles ?? false,
    links: deps.links,
    publicRead: options.auth?.publicRead ?? false,
    clock: deps.clock,
  });
  const { content, resources, locks, lifecycle, revisions } = services;
  const { clock } = deps;
  const { maxInlineBytes, maxResourceBytes } = options.limits;
  // Signed links are for browsers: they go to the content origin, the one that renders active content.
  const linkOrigin = options.contentOrigin ?? options.publicUrl;

  const readiness = [
    { name: "database", check: () => deps.store.ping() },
    { name: "storage", check: () => deps.blobs.probe() },
  ];
  // The readiness window runs on the app's clock, as every other expiry does.
  app.route("/", createMetaRouter(readiness, guards, { now: () => clock().getTime() }));
  app.route(
    "/",
    createResourceRouter({
      resources,
      revisions,
      guards,
      links: deps.links,
      clock,
      publicUrl: linkOrigin,
      maxInlineBytes,
    }),
  );
  app.route("/", createContentRouter({ resources, revisions, content, guards, images: services.images }));
  app.route("/", createUploadRouter({ resources, guards, maxBytes: maxResourceBytes, staging: deps.blobs }));
  app.route("/", createUsageRouter({ quotas: services.quotas, guards }));
  app.route("/", createTenantRouter({ quotas: services.quotas, guards }));
  app.route("/", createTusRouter({ tus: services.tus, guards, maxBytes: maxResourceBytes }));
  app.route("/", createDirectRouter({ direct: services.direct, guards, publicUrl: options.publicUrl }));
  app.route(
    "/",
    createLifecycleRouter({ lifecycle, revisions, content, guards, maxInlineBytes, cachedContent: deps.cachedContent }),
  );
  app.route("/", createLockRouter({ locks, guards }));
  app.route("/", createFindingRouter({ finding: services.finding, guards }));
  app.route("/", createWebhookRouter({ webhooks: services.webhooks, guards }));
  mountExplorer(app, deps.readAsset, {
    issuer: options.auth?.issuer,
    clientId: options.auth?.explorerClientId ?? "",
    compressAssets: !deps.platformCompresses,
    publicUrl: options.publicUrl,
  });
  mountLibrary(app, deps.readLibraryAsset, {
    auth: options.auth ? explorerAuth(options.auth.issuer, options.auth.explorerClientId) : null,
    tenantClaim: options.auth?.tenantClaim ?? null,
    previewPreset: deps.images ? PREVIEW_PRESET : null,
    roles: options.auth ? { clientId: options.auth.clientIds[0] ?? "", realmRoles: options.auth.realmRoles } : null,
    linkOrigin,
    uploadOrigins: uploadOrigins(deps.blobs),
    // getData of large content answers 307 to the bucket then: previews load from there too.
    readOrigins: (options.direct?.readMinBytes ?? 0) > 0 ? uploadOrigins(deps.blobs) : [],
    compressAssets: !deps.platformCompresses,
  });
  return app;
}

export type App = ReturnType<typeof createApp>;
