/** The usage endpoint: readers with the consumer role; the service decides who may see which tenant. */
import type { Guards } from "../../auth/guards.js";
import type { QuotaService } from "../../services/quotas.js";
import { createRouter, guarded, type RouteGroup } from "../router.js";
import { getUsage } from "./contract.js";

export function createUsageRouter({ quotas, guards }: { quotas: QuotaService; guards: Guards }): RouteGroup {
  const router = createRouter();
  return router.openapi(guarded(getUsage, guards.role("consumer")), async (c) =>
    c.json(await quotas.usage(c.req.valid("query").resourceTenantId, c.get("principal")), 200),
  );
}
