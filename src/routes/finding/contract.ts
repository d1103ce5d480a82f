/** Route definitions of issue 38: updateResourceMetadata, searchResources, folders. No logic here. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { ResourceSchema } from "../resources/schemas.js";
import { BEARER_SECURITY as security } from "../router.js";
import {
  FolderListSchema,
  FoldersQuerySchema,
  SearchPageSchema,
  SearchQuerySchema,
  UPDATE_METADATA_EXAMPLE,
  UpdateResourceMetadataRequestSchema,
} from "./schemas.js";

export const updateResourceMetadata = createRoute({
  method: "post",
  path: `${API_PREFIX}/updateResourceMetadata`,
  operationId: "updateResourceMetadata",
  tags: ["resources"],
  summary: "Change a resource's title, description, altText, tags, folder or metadata (no new revision)",
  description:
    "`patch` is a JSON Merge Patch (RFC 7396) over the six fields: `null` removes a field, `metadata` merges key by key. With `If-Match: \"<metadataVersion>\"` the change applies only to that version (412 otherwise). The resource's owner or an admin; while it is locked, only the lock's holder with its `lockID` (423 otherwise). Emits the webhook event `resource.metadata_updated`.",
  security,
  request: {
    headers: z.object({
      "if-match": z
        .string()
        .optional()
        .openapi({ description: 'The metadataVersion you read, quoted: `"3"`.', example: '"1"' }),
    }),
    body: {
      required: true,
      content: {
        "application/json": { schema: UpdateResourceMetadataRequestSchema, example: UPDATE_METADATA_EXAMPLE },
      },
    },
  },
  responses: {
    200: { description: "The resource as changed", content: { "application/json": { schema: ResourceSchema } } },
    ...problemResponses(400, 401, 403, 404, 409, 412, 415, 423),
  },
});

export const searchResources = createRoute({
  method: "get",
  path: `${API_PREFIX}/searchResources`,
  operationId: "searchResources",
  tags: ["resources"],
  summary: "Find a tenant's live resources by text, tags, folder, media type and creation time",
  description:
    "Top-level resources only (a package's files are found through their package). Keyset pages: `nextCursor` continues the same query and sort.",
  security,
  request: { query: SearchQuerySchema },
  responses: {
    200: { description: "One page", content: { "application/json": { schema: SearchPageSchema } } },
    ...problemResponses(400, 401, 403),
  },
});

export const folders = createRoute({
  method: "get",
  path: `${API_PREFIX}/folders`,
  operationId: "folders",
  tags: ["resources"],
  summary: "The direct subfolders of a folder that hold live resources, with counts",
  security,
  request: { query: FoldersQuerySchema },
  responses: {
    200: {
      description: "The subfolders, in path order",
      content: { "application/json": { schema: FolderListSchema } },
    },
    ...problemResponses(400, 401, 403),
  },
});
