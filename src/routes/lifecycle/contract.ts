/** Route definitions for updating, deleting and purging resources, and for their revisions. No logic here. */
import { createRoute } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { contentRequest, contentResponses } from "../content/contract.js";
import { UidParamsSchema } from "../content/schemas.js";
import { LockedResourceRequestSchema, LockedResourceSchema } from "../locks/schemas.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY, jsonPost } from "../router.js";
import { ResourceSchema } from "../resources/schemas.js";
import {
  PurgeRequestSchema,
  PurgeResultSchema,
  RevisionListSchema,
  RevisionParamsSchema,
  UpdateResourceRequestSchema,
} from "./schemas.js";

export const updateResource = jsonPost({
  verb: "updateResource",
  tag: "lifecycle",
  summary: "Replace content and/or author, name, media type under the caller's live lock (UID and URI stay)",
  description:
    "The previous state stays available as a revision. The lock stays held. A failed update (download error, size limit, lost lock) leaves the resource unchanged. A package's content cannot be replaced (409).",
  body: UpdateResourceRequestSchema,
  ok: { status: 200, description: "Updated", schema: LockedResourceSchema },
  errors: [401, 403, 404, 409, 413, 422, 423, 502, 503, 504, 507],
});

export const deleteResource = jsonPost({
  verb: "deleteResource",
  tag: "lifecycle",
  summary: "Soft-delete a resource under the caller's live lock; it (and a package's files) is no longer served",
  body: LockedResourceRequestSchema,
  ok: { status: 200, description: "Deleted; the resource as it was", schema: ResourceSchema },
  errors: [401, 403, 404, 409, 423, 503, 507],
});

export const purgeResource = jsonPost({
  verb: "purgeResource",
  tag: "lifecycle",
  summary: "Admin: remove a resource (deleted or not), its files, revisions and locks for good",
  description:
    "Stored content is deleted once no resource or revision references it (content is deduplicated per tenant).",
  body: PurgeRequestSchema,
  ok: { status: 200, description: "Purged", schema: PurgeResultSchema },
  errors: [401, 403, 404, 503],
});

export const getRevisions = createRoute({
  method: "get",
  path: `${API_PREFIX}/getRevisions/{resourceUID}`,
  operationId: "getRevisions",
  tags: ["lifecycle"],
  summary: "A resource's revisions, oldest first (also after a delete, which is the last one)",
  security: BEARER_SECURITY,
  request: { params: UidParamsSchema },
  responses: {
    200: { description: "The revisions", content: { "application/json": { schema: RevisionListSchema } } },
    ...problemResponses(401, 403, 404),
  },
});

export const getRevisionData = createRoute({
  method: "get",
  path: `${API_PREFIX}/getRevisionData/{resourceUID}/{revision}`,
  operationId: "getRevisionData",
  tags: ["lifecycle"],
  summary: "The content a resource had in one revision (same serving rules as getData)",
  security: [...BEARER_SECURITY, { signedLink: [] }],
  request: { params: RevisionParamsSchema, ...contentRequest },
  responses: { ...contentResponses, ...problemResponses(400) },
});
