/** The tenant list: readers with the consumer role; the quota service decides who sees which tenants. */
import type { Guards } from "../../auth/guards.js";
import type { QuotaService } from "../../services/quotas.js";
import { createRouter, guarded, type RouteGroup } from "../router.js";
import { listTenants } from "./contract.js";

export function createTenantRouter({ quotas, guards }: { quotas: QuotaService; guards: Guards }): RouteGroup {
  return createRouter().openapi(guarded(listTenants, guards.role("consumer")), async (c) =>
    c.json({ tenants: await quotas.tenants(c.get("principal")) }, 200),
  );
}
