/** Route definitions (method, path, request, responses) for creating, querying and listing resources. No logic here. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY as security, jsonPost } from "../router.js";
import {
  CreateDataLinkRequestSchema,
  CreateResourceRequestSchema,
  DataLinkSchema,
  ListResourcesQuerySchema,
  ResourcePageSchema,
  ResourceQueryRequestSchema,
  ResourceSchema,
} from "./schemas.js";

export const createResource = createRoute({
  method: "post",
  path: `${API_PREFIX}/createResource`,
  operationId: "createResource",
  tags: ["resources"],
  summary: "Register a resource: its content from resourceExternalURI (downloaded) or resourceBinary (base64)",
  description:
    "A media type ending in `zip` makes a package: every file becomes a resource under the zip's URI context, and the answer is the start page (root info.json `startpage`/`startPage`, else the SCORM imsmanifest.xml launch resource) with the other files in `resourcesList`.",
  security,
  request: {
    body: { required: true, content: { "application/json": { schema: CreateResourceRequestSchema } } },
  },
  responses: {
    201: {
      description: "Created; `Location` is the content's getData URL",
      headers: z.object({ Location: z.string() }),
      content: { "application/json": { schema: ResourceSchema } },
    },
    ...problemResponses(400, 401, 403, 413, 415, 422, 502, 503, 504, 507),
  },
});

export const queryResource = jsonPost({
  verb: "queryResource",
  tag: "resources",
  summary: "A resource by UID; for a package, its files in resourcesList",
  body: ResourceQueryRequestSchema,
  ok: { status: 200, description: "The resource", schema: ResourceSchema },
  errors: [401, 403, 404],
});

export const listResources = createRoute({
  method: "get",
  path: `${API_PREFIX}/listResources`,
  operationId: "listResources",
  tags: ["resources"],
  summary: "A tenant's live resources, oldest first, filtered, one page at a time",
  description:
    "Order is (createdAt, resourceUID): stable, so cursors never skip or repeat a resource while others are added.",
  security,
  request: { query: ListResourcesQuerySchema },
  responses: {
    200: { description: "One page", content: { "application/json": { schema: ResourcePageSchema } } },
    ...problemResponses(400, 401, 403),
  },
});

export const createDataLink = createRoute({
  method: "post",
  path: `${API_PREFIX}/createDataLink`,
  operationId: "createDataLink",
  tags: ["resources"],
  summary: "Mint a signed, expiring getData URL that works without a token (e.g. for <img src>)",
  security,
  request: { body: { required: true, content: { "application/json": { schema: CreateDataLinkRequestSchema } } } },
  responses: {
    200: { description: "The signed link", content: { "application/json": { schema: DataLinkSchema } } },
    // 503: the server has no CMS_PUBLIC_URL, and links are never built on the request's Host header.
    ...problemResponses(400, 401, 403, 404, 415, 503),
  },
});
