/**
 * Route definitions for reading content: getData by URI (GET/HEAD and POST),
 * getMultiPartData (its range-serving twin), getDataUuid and getParentUuid. No logic here.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY } from "../router.js";
import {
  ContentRequestHeadersSchema,
  DataRequestSchema,
  ImageQuerySchema,
  SignedLinkQuerySchema,
  UidParamsSchema,
  UriParamsSchema,
} from "./schemas.js";

const binary = { schema: z.string().openapi({ format: "binary" }) };
const readSecurity = [...BEARER_SECURITY, { signedLink: [] }];

const text = (description: string, example: string) => ({ description, schema: { type: "string" as const, example } });
const VALIDATORS = {
  ETag: text(
    "Strong validator: the quoted SHA-256 of the content.",
    '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
  ),
  "Last-Modified": text("When this content was stored.", "Mon, 23 Nov 2026 10:00:00 GMT"),
};
const CACHING = {
  "Cache-Control": text(
    "`public` when reads need no token, else `private`: a versioned URL (`?v=`) or a revision `max-age=31536000, immutable`; a mutable URL `no-cache` (or, public, `max-age=CMS_CACHE_MAX_AGE, stale-while-revalidate=…`); a signed link `private, max-age=` its remaining lifetime.",
    "public, max-age=31536000, immutable",
  ),
  Vary: text("What the answer varies on besides the URL.", "Want-Content-Digest"),
};
const CONTENT_HEADERS = {
  ...VALIDATORS,
  ...CACHING,
  Link: text(
    'On a mutable URL: the versioned URL of the same bytes, `rel="duplicate"` (RFC 6249).',
    '</cms/v1.0/getData/01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png?v=9f86d081884c7d65>; rel="duplicate"',
  ),
  "Accept-Ranges": text("Always `bytes`.", "bytes"),
  "Content-Length": {
    description: "Bytes in this response's body.",
    schema: { type: "integer" as const, example: 6789 },
  },
  "Content-Disposition": text(
    "Inline, with the resource's name (RFC 6266, RFC 8187 for UTF-8).",
    'inline; filename="logo.png"',
  ),
};

/** GET/HEAD of content: the request headers, the signed link's query and what each answer carries. */
export const contentRequest = { headers: ContentRequestHeadersSchema, query: SignedLinkQuerySchema };

export const contentResponses = {
  200: { description: "The content", headers: CONTENT_HEADERS, content: { "*/*": binary } },
  206: {
    description: "Partial content (one range, or multipart/byteranges)",
    headers: {
      ...CONTENT_HEADERS,
      "Content-Range": text("The range sent, of the whole (single range only).", "bytes 0-99/6789"),
    },
    content: { "*/*": binary },
  },
  304: { description: "Not modified", headers: { ...VALIDATORS, ...CACHING } },
  ...problemResponses(401, 403, 404, 412, 416),
};

const SERVING =
  "Streams the content with its registered media type, a strong ETag (SHA-256), Range (single, multiple, suffix, open) and conditional requests (If-None-Match, If-Modified-Since, If-Match, If-Unmodified-Since, If-Range). HEAD returns the same headers. Deleted resources are not served.";

/** Served at `:path{.+}` (OpenAPI cannot express a parameter spanning segments), so relative links inside packages work. */
export const getData = createRoute({
  method: "get",
  path: `${API_PREFIX}/getData/{context}/{path}`,
  operationId: "getData",
  tags: ["content"],
  summary: "Fetch a resource's content by its resourceURI",
  description: SERVING,
  security: readSecurity,
  request: { params: UriParamsSchema, ...contentRequest, query: ImageQuerySchema },
  // 422 NOT_TRANSFORMABLE / IMAGE_TOO_LARGE, 501 TRANSFORM_UNAVAILABLE, 503 busy: image parameters only.
  responses: { ...contentResponses, ...problemResponses(400, 401, 403, 404, 412, 416, 422, 501, 503) },
});

export const getMultiPartData = createRoute({
  ...getData,
  path: `${API_PREFIX}/getMultiPartData/{context}/{path}`,
  operationId: "getMultiPartData",
  summary: "Same as GET getData, under the range-serving endpoint's name",
});

export const getDataUuid = createRoute({
  method: "get",
  path: `${API_PREFIX}/getDataUuid/{resourceUID}`,
  operationId: "getDataUuid",
  tags: ["content"],
  summary: "Fetch a resource's content by its UID",
  description: `${SERVING} An unknown UID is 404.`,
  security: readSecurity,
  request: { params: UidParamsSchema, ...contentRequest },
  responses: contentResponses,
});

export const postData = createRoute({
  method: "post",
  path: `${API_PREFIX}/getData`,
  operationId: "getDataByDTO",
  tags: ["content"],
  summary: "Fetch a resource's content by resourceUID or resourceURI (DataDTO)",
  description: "The whole content with the media type registered for the resource.",
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
  operationId: "getParentUuid",
  tags: ["content"],
  summary: "The UID of the package a file was extracted from",
  description:
    "The body is the UID as plain text, or a JSON string. The answer is the parent UID as plain text; a resource that is not part of a package is 404.",
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
