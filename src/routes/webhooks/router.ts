/** The webhook admin routes: all behind the admin role and within the caller's tenants, like purgeResource. */
import type { Guards } from "../../auth/guards.js";
import type { WebhookService } from "../../services/webhooks.js";
import { createRouter, guarded, type RouteGroup } from "../router.js";
import * as contract from "./contract.js";

export function createWebhookRouter({ webhooks, guards }: { webhooks: WebhookService; guards: Guards }): RouteGroup {
  const admin = guards.role("admin");
  return createRouter()
    .openapi(guarded(contract.createWebhook, admin), async (c) =>
      c.json(await webhooks.subscribe(c.req.valid("json"), c.get("principal")), 201),
    )
    .openapi(guarded(contract.listWebhooks, admin), async (c) =>
      c.json({ webhooks: await webhooks.list(c.get("principal")) }, 200),
    )
    .openapi(guarded(contract.deleteWebhook, admin), async (c) => {
      await webhooks.remove(c.req.valid("param").id, c.get("principal"));
      return c.body(null, 204);
    })
    .openapi(guarded(contract.listDeliveries, admin), async (c) => {
      const deliveries = await webhooks.deliveries(
        c.req.valid("param").id,
        c.req.valid("query").limit,
        c.get("principal"),
      );
      return c.json({ deliveries }, 200);
    })
    .openapi(guarded(contract.retryDelivery, admin), async (c) => {
      const { id, deliveryId } = c.req.valid("param");
      await webhooks.retry(id, deliveryId, c.get("principal"));
      return c.body(null, 202);
    });
}
