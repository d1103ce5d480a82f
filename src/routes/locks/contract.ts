/**
 * Route definitions for locks. Conflicts answer 423 LOCKED (someone else holds a live lock, or the
 * caller already does) and 409 LOCK_NOT_HELD (no live lock matches).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { ResourceUidSchema } from "../resources/schemas.js";
import { BEARER_SECURITY, jsonPost } from "../router.js";
import {
  LockedResourceRequestSchema,
  LockedResourceSchema,
  LockRequestSchema,
  LockResourceRequestSchema,
  LockSchema,
  NewLockRequestSchema,
  QueryLockRequestSchema,
  ResourceAccessSchema,
} from "./schemas.js";

const tag = "locks";

export const lockResourceDto = jsonPost({
  verb: "lockResourceDTO",
  tag,
  summary: "Lock a resource for updateResource/deleteResource (CMS_LOCK_TTL, default 30 minutes)",
  body: LockResourceRequestSchema,
  ok: {
    status: 200,
    description: "Locked: keep lockID and author for update, renew, unlock and delete",
    schema: LockedResourceSchema,
  },
  errors: [401, 403, 404, 423, 503, 507],
});

export const unlockResourceDto = jsonPost({
  verb: "unlockResourceDTO",
  tag,
  summary: "Release a resource lock (its holder, or an authenticated admin)",
  body: LockedResourceRequestSchema,
  ok: { status: 204, description: "Unlocked" },
  errors: [401, 403, 404, 409, 423, 503, 507],
});

export const renewResourceDtoLock = jsonPost({
  verb: "renewResourceDtoLock",
  tag,
  summary: "Extend a live resource lock to now + CMS_LOCK_TTL",
  body: LockedResourceRequestSchema,
  ok: { status: 200, description: "Renewed", schema: LockedResourceSchema },
  errors: [401, 403, 404, 409, 423, 503, 507],
});

export const lockName = jsonPost({
  verb: "lockResource",
  tag,
  summary: "Lock any name (generic lock API; shares the namespace with resource locks)",
  body: NewLockRequestSchema,
  ok: { status: 200, description: "Locked", schema: LockSchema },
  errors: [401, 403, 423, 503, 507],
});

export const unlockName = jsonPost({
  verb: "unlockResource",
  tag,
  summary: "Release a named lock (its holder, or an authenticated admin)",
  body: LockRequestSchema,
  ok: { status: 204, description: "Unlocked" },
  errors: [401, 403, 409, 423, 503, 507],
});

export const renewName = jsonPost({
  verb: "renewResourceLock",
  tag,
  summary: "Extend a live named lock",
  body: LockRequestSchema,
  ok: { status: 200, description: "Renewed", schema: LockSchema },
  errors: [401, 403, 409, 423, 503, 507],
});

export const queryName = jsonPost({
  verb: "queryResourceLock",
  tag,
  summary: "The live lock on a name (lockID only for its holder)",
  body: QueryLockRequestSchema,
  ok: { status: 200, description: "The lock", schema: LockSchema },
  errors: [401, 403, 404],
});

export const resourceAccess = createRoute({
  method: "get",
  path: `${API_PREFIX}/resourceAccess/{resourceUID}`,
  operationId: "getResourceAccess",
  tags: [tag],
  summary: "A resource's live lock (or null) and what the caller may do with it",
  description:
    "For pages and tools that offer only the actions the caller's roles and ownership allow. Unlike queryResourceLock, an unlocked resource is an answer (lock null), not a 404.",
  security: BEARER_SECURITY,
  request: { params: z.object({ resourceUID: ResourceUidSchema }) },
  responses: {
    200: {
      description: "The lock and the caller's rights",
      content: { "application/json": { schema: ResourceAccessSchema } },
    },
    ...problemResponses(400, 401, 403, 404),
  },
});
