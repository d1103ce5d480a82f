/**
 * The API explorer: the OpenAPI 3.1 document and Swagger UI at `/swagger-ui.html` and
 * at `/docs`, with Swagger UI's assets served from our own origin so it works with no internet.
 * With auth on, the page logs the user in at the provider (authorization code + PKCE).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env.js";
import { ProblemError } from "../../problems.js";
import type { AssetReader } from "../../app-deps.js";
import { sendAsset, vendorAssets } from "./assets.js";
import { EXPLORER_SCRIPT, type ExplorerAuth, explorerPage } from "./page.js";
import { openApiDocument } from "./openapi-document.js";
import { TRY_IT_PLUGIN } from "./try-it-plugin.js";

export const VENDOR_PATH = "/vendor/swagger-ui-dist";

// A fixed allow-list: the file name in the URL never reaches a file system path unchecked.
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-16x16.png": "image/png",
  "favicon-32x32.png": "image/png",
};

export interface ExplorerOptions {
  /** The provider's issuer when auth is on; Keycloak's endpoint layout is assumed under it. */
  issuer?: string;
  clientId: string;
  /** Send vendor files gzipped ourselves; false where the runtime compresses responses (Workers). */
  compressAssets: boolean;
  /** CMS_PUBLIC_URL: the document's server; else "/" (the origin the document was fetched from). */
  publicUrl?: string;
}

/** The provider's endpoints the explorer (and the library page, through /explorer.js) logs in with. */
export const explorerAuth = (issuer: string, clientId: string): ExplorerAuth => ({
  authorizationUrl: `${issuer}/protocol/openid-connect/auth`,
  tokenUrl: `${issuer}/protocol/openid-connect/token`,
  logoutUrl: `${issuer}/protocol/openid-connect/logout`,
  clientId,
});

export function mountExplorer(app: OpenAPIHono<AppEnv>, readAsset: AssetReader, options: ExplorerOptions) {
  const auth = options.issuer ? explorerAuth(options.issuer, options.clientId) : null;

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "An access token from the identity provider (required only when the server runs with CMS_AUTH_ENABLED=true).",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "signedLink", {
    type: "apiKey",
    in: "query",
    name: "signature",
    description: "getData only: the `expires` and `signature` query parameters of a link minted by createDataLink.",
  });
  if (auth) {
    app.openAPIRegistry.registerComponent("securitySchemes", "oauth2", {
      type: "oauth2",
      flows: {
        authorizationCode: {
          authorizationUrl: auth.authorizationUrl,
          tokenUrl: auth.tokenUrl,
          scopes: { openid: "OpenID Connect" },
        },
      },
    });
  }
  const document = openApiDocument(app, {
    title: "Content resource service",
    version: "1.0",
    description: "Register resources by external URI and fetch their content over HTTP.",
  });
  // Never the request's Host (a handed-out URL must not be steerable): without CMS_PUBLIC_URL the
  // server is "/", which clients resolve against the document's own URL (OpenAPI 3.1 §4.8.5).
  const server = options.publicUrl ?? "/";
  app.get("/openapi.json", (c) => c.json(document(server)));

  const settings = { specUrl: "/openapi.json", auth };
  const page = explorerPage(settings, "/vendor");
  // The explorer holds the user's token: no inline script but Swagger UI's hashed one, nothing foreign, never framed.
  const pageHeaders = { "content-security-policy": page.csp, "x-frame-options": "DENY" };
  // The root is for people: the media library page (src/routes/library) is where they start.
  app.get("/", (c) => c.redirect("/library", 302));
  for (const path of ["/swagger-ui.html", "/docs"]) app.get(path, (c) => c.html(page.html, 200, pageHeaders));
  app.get("/explorer.js", (c) =>
    c.body(`${TRY_IT_PLUGIN}\n${EXPLORER_SCRIPT}`, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-cache",
    }),
  );

  const vendor = vendorAssets(readAsset, options.compressAssets);
  app.get(`${VENDOR_PATH}/:file`, async (c) => {
    const file = c.req.param("file");
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined; // not Object.prototype's names
    const asset = type ? await vendor(file) : null;
    if (!type || !asset) throw new ProblemError("NOT_FOUND", `no asset ${file}`);
    // swagger-ui-dist is pinned by exact version, so its files can be cached for a day.
    return sendAsset(c, asset, type, "public, max-age=86400");
  });
}
