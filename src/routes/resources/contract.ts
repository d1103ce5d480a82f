/** Route definitions (method, path, request, responses) for resources. No logic here. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http-errors.js";
import { API_PREFIX } from "../meta.js";
import {
  CreateDataLinkRequestSchema,
  CreateResourceRequestSchema,
  DataLinkSchema,
  GetDataParamsSchema,
  ResourceSchema,
} from "./schemas.js";
import { BEARER_SECURITY as security } from "../router.js";

export const createResource = createRoute({
  method: "post",
  path: `${API_PREFIX}/createResource`,
  tags: ["resources"],
  summary: "Register a resource: download its content from resourceExternalURI and store it",
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
    ...problemResponses(400, 401, 403, 413, 415, 422, 502, 504),
  },
});

const binary = { schema: z.string().openapi({ format: "binary" }) };

const getDataResponses = {
  200: { description: "The content", content: { "*/*": binary } },
  206: { description: "Partial content (one range, or multipart/byteranges)", content: { "*/*": binary } },
  304: { description: "Not modified" },
  ...problemResponses(401, 403, 404, 412, 416),
};

export const getData = createRoute({
  method: "get",
  path: `${API_PREFIX}/getData/{resourceUID}/{resourceName}`,
  tags: ["resources"],
  summary: "Fetch a resource's content",
  description:
    "Streams the content with its registered media type, a strong ETag (SHA-256), Range (single, multiple, suffix, open) and conditional requests (If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since, If-Range). HEAD returns the same headers.",
  security: [...security, { signedLink: [] }],
  request: { params: GetDataParamsSchema },
  responses: getDataResponses,
});

export const createDataLink = createRoute({
  method: "post",
  path: `${API_PREFIX}/createDataLink`,
  tags: ["resources"],
  summary: "Mint a signed, expiring getData URL that works without a token (e.g. for <img src>)",
  security,
  request: { body: { required: true, content: { "application/json": { schema: CreateDataLinkRequestSchema } } } },
  responses: {
    200: { description: "The signed link", content: { "application/json": { schema: DataLinkSchema } } },
    ...problemResponses(400, 401, 403, 404, 415),
  },
});
