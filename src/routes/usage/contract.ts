/** GET usage: a tenant's stored bytes, resources, revisions and today's ingress, with its quota limits. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { TenantIdSchema } from "../resources/schemas.js";
import { BEARER_SECURITY } from "../router.js";

const Limit = z.number().int().nullable().openapi({ description: "null: no limit" });

export const UsageSchema = z
  .object({
    resourceTenantId: z.string(),
    bytes: z.number().int().openapi({
      description:
        "Sum of the sizes of the content the tenant's resources and package files keep, earlier revisions included (content shared by several resources counts for each)",
    }),
    resources: z
      .number()
      .int()
      .openapi({ description: "Top-level resources (a package counts once), deleted ones included until purged" }),
    revisions: z.number().int(),
    ingressToday: z.number().int().openapi({ description: "Bytes taken in today (UTC) by creations" }),
    limits: z.object({ bytes: Limit, resources: Limit, ingressBytesPerDay: Limit }),
  })
  .openapi("Usage");

export const getUsage = createRoute({
  method: "get",
  path: `${API_PREFIX}/usage`,
  operationId: "getUsage",
  tags: ["resources"],
  summary: "A tenant's usage and quota limits (admins, or callers confined to that tenant)",
  description:
    "Limits come from CMS_QUOTA_BYTES, CMS_QUOTA_RESOURCES, CMS_QUOTA_INGRESS_BYTES_PER_DAY and the tenant's entry in CMS_QUOTA_OVERRIDES. A write over a limit is refused with 507 QUOTA_EXCEEDED and stores nothing.",
  security: BEARER_SECURITY,
  request: { query: z.object({ resourceTenantId: TenantIdSchema }) },
  responses: {
    200: { description: "The usage document", content: { "application/json": { schema: UsageSchema } } },
    ...problemResponses(400, 401, 403),
  },
});
