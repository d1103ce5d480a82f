/**
 * The API explorer: the OpenAPI 3.1 document and Swagger UI at the anchor's `/swagger-ui.html` and
 * at `/docs`, with Swagger UI's assets served from our own origin so it works with no internet.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { swaggerUI } from "@hono/swagger-ui";
import type { AppEnv } from "../env.js";
import { ProblemError } from "../errors.js";

/** Reads one file of the swagger-ui-dist package; the runtime entry decides where from. */
export type AssetReader = (file: string) => Promise<ReadableStream<Uint8Array> | null>;

export const VENDOR_PATH = "/vendor/swagger-ui-dist";

// A fixed allow-list: the file name in the URL never reaches a file system path unchecked.
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "oauth2-redirect.html": "text/html; charset=utf-8",
  "oauth2-redirect.js": "text/javascript; charset=utf-8",
  "favicon-16x16.png": "image/png",
  "favicon-32x32.png": "image/png",
};

export function mountExplorer(app: OpenAPIHono<AppEnv>, readAsset: AssetReader) {
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Content resource service",
      version: "1.0",
      description: "Register resources by external URI and fetch their content over HTTP.",
    },
  });

  const page = swaggerUI<AppEnv>({ url: "/openapi.json", baseUrl: "/vendor", title: "Content resource service — API explorer" });
  app.get("/docs", page);
  app.get("/swagger-ui.html", page);

  app.get(`${VENDOR_PATH}/:file`, async (c) => {
    const file = c.req.param("file");
    const type = ASSETS[file];
    const body = type ? await readAsset(file) : null;
    if (!type || !body) throw new ProblemError("NOT_FOUND", `no asset ${file}`);
    // swagger-ui-dist is pinned by exact version, so its files can be cached for a day.
    return c.body(body, 200, { "content-type": type, "cache-control": "public, max-age=86400" });
  });
}
