/** GET tenants: the tenants a caller may see, each with its resource count and stored bytes. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY } from "../router.js";

export const TenantSummarySchema = z
  .object({
    resourceTenantId: z.string(),
    resources: z
      .number()
      .int()
      .openapi({ description: "Top-level resources, deleted ones included until purged (as getUsage counts them)" }),
    bytes: z
      .number()
      .int()
      .openapi({ description: "Stored bytes, earlier revisions included (as getUsage counts them)" }),
  })
  .openapi("TenantSummary");

export const TenantListSchema = z.object({ tenants: z.array(TenantSummarySchema) }).openapi("TenantList");

export const listTenants = createRoute({
  method: "get",
  path: `${API_PREFIX}/tenants`,
  operationId: "listTenants",
  tags: ["resources"],
  summary: "The tenants the caller may see, with resource counts and usage",
  description:
    "A token confined by the tenant claim gets its own tenants (those without any resource yet at zero); an admin whose token names no tenants gets every tenant that has had a write; any other caller 403. With auth off, every tenant. Ordered by tenant id.",
  security: BEARER_SECURITY,
  responses: {
    200: { description: "The tenants", content: { "application/json": { schema: TenantListSchema } } },
    ...problemResponses(401, 403),
  },
});
