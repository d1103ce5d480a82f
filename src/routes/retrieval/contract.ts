/**
 * Route definitions for reading content: getData by URI (GET/HEAD and the anchor's POST),
 * getMultiPartData (its range-serving twin), getDataUuid and getParentUuid. No logic here.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http-errors.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY } from "../router.js";
import { DataRequestSchema, UidParamsSchema, UriParamsSchema } from "./schemas.js";

const binary = { schema: z.string().openapi({ format: "binary" }) };
const readSecurity = [...BEARER_SECURITY, { signedLink: [] }];

export const contentResponses = {
  200: { description: "The content", content: { "*/*": binary } },
  206: { description: "Partial content (one range, or multipart/byteranges)", content: { "*/*": binary } },
  304: { description: "Not modified" },
  ...problemResponses(401, 403, 404, 412, 416),
};

const SERVING =
  "Streams the content with its registered media type, a strong ETag (SHA-256), Range (single, multiple, suffix, open) and conditional requests (If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since, If-Range). HEAD returns the same headers. Deleted resources are not served.";

/** Served at `:path{.+}` (OpenAPI cannot express a parameter spanning segments), so relative links inside packages work. */
export const getData = createRoute({
  method: "get",
  path: `${API_PREFIX}/getData/{context}/{path}`,
  tags: ["content"],
  summary: "Fetch a resource's content by its resourceURI",
  description: SERVING,
  security: readSecurity,
  request: { params: UriParamsSchema },
  responses: contentResponses,
});

export const getMultiPartData = createRoute({
  ...getData,
  path: `${API_PREFIX}/getMultiPartData/{context}/{path}`,
  summary: "Same as GET getData (the anchor's range-serving endpoint)",
});

export const getDataUuid = createRoute({
  method: "get",
  path: `${API_PREFIX}/getDataUuid/{resourceUID}`,
  tags: ["content"],
  summary: "Fetch a resource's content by its UID",
  description: `${SERVING} An unknown UID is 404 (the anchor answered 400).`,
  security: readSecurity,
  request: { params: UidParamsSchema },
  responses: contentResponses,
});

export const postData = createRoute({
  method: "post",
  path: `${API_PREFIX}/getData`,
  tags: ["content"],
  summary: "Fetch a resource's content by resourceUID or resourceURI (the anchor's DataDTO)",
  description: "The whole content with the registered media type (the anchor sniffed it and never checked the database).",
  security: BEARER_SECURITY,
  request: { body: { required: true, content: { "application/json": { schema: DataRequestSchema } } } },
  responses: {
    200: { description: "The content", content: { "*/*": binary } },
    ...problemResponses(400, 401, 403, 404, 415),
  },
});

export const getParentUuid = createRoute({
  method: "post",
  path: `${API_PREFIX}/getParentUuid`,
  tags: ["content"],
  summary: "The UID of the package a file was extracted from",
  description:
    "The body is the UID as plain text (as in the anchor), or a JSON string. The answer is the parent UID as plain text; a resource that is not part of a package is 404 (the anchor failed with 500).",
  security: BEARER_SECURITY,
  request: {
    body: {
      required: true,
      content: { "text/plain": { schema: z.string().openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }) } },
    },
  },
  responses: {
    200: { description: "The parent's UID", content: { "text/plain": { schema: z.string() } } },
    ...problemResponses(400, 401, 403, 404, 415),
  },
});
