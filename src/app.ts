/**
 * createApp(deps): the one Hono app every runtime serves. Pure: no environment, no I/O at build
 * time; runtime entry points (node.ts, bun.ts, worker.ts) build the deps and serve it.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { methodNotAllowed } from "hono/method-not-allowed";
import { createGuards } from "./auth/guards.js";
import type { AppDeps } from "./app-deps.js";
import type { AppEnv } from "./http/app-env.js";
import { ProblemError } from "./problems.js";
import { notFound, onError, onMethodNotAllowed, validationHook } from "./http/problem-handlers.js";
import { API_CORS, cors } from "./http/middleware/cors.js";
import { headContentLength } from "./http/middleware/head-length.js";
import { verifyRequestDigests } from "./http/middleware/request-digest.js";
import { requestContext } from "./http/middleware/request-context.js";
import { mountExplorer } from "./routes/explorer/index.js";
import { createContentRouter } from "./routes/content/router.js";
import { createLifecycleRouter } from "./routes/lifecycle/router.js";
import { createLockRouter } from "./routes/locks/router.js";
import { API_PREFIX, createMetaRouter } from "./routes/meta.js";
import { createResourceRouter } from "./routes/resources/router.js";
import { TUS_PATH } from "./routes/tus/contract.js";
import { createTusRouter } from "./routes/tus/router.js";
import { createUploadRouter } from "./routes/uploads/router.js";
import { createUsageRouter } from "./routes/usage/router.js";
import { createServices, type Services } from "./services/index.js";

export type { AppConfig, AppDeps } from "./app-deps.js";

/** JSON request bodies carry metadata only; content arrives by URI, inline base64 or a streamed upload. */
const MAX_JSON_BODY_BYTES = 64 * 1024;

const limitTo = (maxSize: number, what: string) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new ProblemError("PAYLOAD_TOO_LARGE", `${what} are limited to ${maxSize} bytes`);
    },
  });

export function createApp(deps: AppDeps, services: Services = createServices(deps)) {
  const { config } = deps;
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use(requestContext(deps.logger));
  // Wraps everything after it: a known path with another method answers 405 + Allow, not 404.
  app.use(methodNotAllowed({ app, onMethodNotAllowed }));
  app.use(cors(API_CORS));
  app.use(headContentLength());
  // Bodies that may carry resourceBinary get room for CMS_MAX_INLINE_BYTES of base64; the streamed
  // upload has no body limit here (the multipart parser and the blob store bound what it stores).
  const inlineBodyBytes = Math.ceil(config.CMS_MAX_INLINE_BYTES / 3) * 4 + MAX_JSON_BODY_BYTES;
  const bodyLimits = new Map([
    [`${API_PREFIX}/createResource`, limitTo(inlineBodyBytes, "createResource bodies")],
    [`${API_PREFIX}/updateResource`, limitTo(inlineBodyBytes, "updateResource bodies")],
    [`${API_PREFIX}/uploadResource`, null],
  ]);
  const jsonLimit = limitTo(MAX_JSON_BODY_BYTES, "JSON request bodies");
  app.use((c, next) => {
    // GET/HEAD carry no body; checking one anyway makes @hono/node-server build a full Request
    // (AbortController included) on the hottest path, getData.
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    // tus bytes are streamed to storage and bounded by Upload-Length there (their digests: tus/router.ts).
    if (c.req.path === TUS_PATH || c.req.path.startsWith(`${TUS_PATH}/`)) return next();
    const limit = bodyLimits.get(c.req.path);
    // The streamed upload hashes its body as it reads it (uploads/router.ts, digestedBody).
    if (limit === null) return next();
    // The body limit wraps the digest check: the bytes hashed are the bounded ones.
    return (limit ?? jsonLimit)(c, async () => {
      await verifyRequestDigests(c, next);
    });
  });
  app.onError(onError);
  app.notFound(notFound);

  const guards = createGuards({
    verifier: deps.verifier,
    tenantClaim: config.CMS_AUTH_TENANT_CLAIM,
    realmRoles: config.CMS_AUTH_REALM_ROLES,
    links: deps.links,
    publicRead: config.CMS_PUBLIC_READ,
    clock: deps.clock,
  });
  const { content, resources, locks, lifecycle, revisions } = services;
  const { clock } = deps;
  const maxInlineBytes = config.CMS_MAX_INLINE_BYTES;
  // Signed links are for browsers: they go to the content origin, the one that renders active content.
  const linkOrigin = config.CMS_CONTENT_ORIGIN ?? config.CMS_PUBLIC_URL;

  const readiness = [
    { name: "database", check: () => deps.store.ping() },
    { name: "storage", check: () => deps.blobs.probe() },
  ];
  // The readiness window runs on the app's clock, as every other expiry does.
  app.route("/", createMetaRouter(readiness, guards, { now: () => clock().getTime() }));
  app.route("/", createResourceRouter({ resources, guards, links: deps.links, clock, publicUrl: linkOrigin, maxInlineBytes }));
  app.route("/", createContentRouter({ resources, content, guards }));
  app.route("/", createUploadRouter({ resources, guards, maxBytes: config.CMS_MAX_RESOURCE_BYTES }));
  app.route("/", createUsageRouter({ quotas: services.quotas, guards }));
  app.route("/", createTusRouter({ tus: services.tus, guards, maxBytes: config.CMS_MAX_RESOURCE_BYTES }));
  app.route("/", createLifecycleRouter({ lifecycle, revisions, content, guards, maxInlineBytes }));
  app.route("/", createLockRouter({ locks, guards }));
  mountExplorer(app, deps.readAsset, {
    issuer: config.CMS_AUTH_ENABLED ? config.CMS_AUTH_ISSUER : undefined,
    clientId: config.CMS_AUTH_EXPLORER_CLIENT_ID,
    compressAssets: !deps.platformCompresses,
    publicUrl: config.CMS_PUBLIC_URL,
  });
  return app;
}

export type App = ReturnType<typeof createApp>;
