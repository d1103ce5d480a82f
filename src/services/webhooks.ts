/**
 * Webhook subscriptions for admins: register (the receiver's URL checked against the SSRF policy
 * here, and again by the deliverer's fetcher on each connect), list, remove, inspect deliveries, retry one.
 * A tenant-confined admin sees and manages only subscriptions limited to its tenants (auth/principal.ts).
 */
import { assertTenants, coversTenants, type Principal } from "../auth/principal.js";
import type { WebhookStore } from "../metadata/webhook-store.js";
import type { WebhookDeliveryRow, WebhookEventType, WebhookSubscriptionRow } from "../metadata/schema.js";
import { createOriginGuard, WEBHOOK_URL } from "../origin/guard.js";
import { ProblemError } from "../problems.js";
import { newWebhookSecret } from "./webhook-signing.js";

export interface NewSubscription {
  url: string;
  events?: WebhookEventType[];
  tenants?: string[];
}

const view = (row: WebhookSubscriptionRow) => ({
  id: row.id,
  url: row.url,
  events: JSON.parse(row.events) as WebhookEventType[],
  tenants: JSON.parse(row.tenants) as string[],
  createdAt: new Date(row.createdAt).toISOString(),
});

const deliveryView = (row: WebhookDeliveryRow) => ({
  id: row.id,
  type: row.type,
  resourceUID: row.resourceUid,
  event: JSON.parse(row.payload) as Record<string, unknown>,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: row.status === "pending" ? new Date(row.nextAttemptAt).toISOString() : null,
  lastStatusCode: row.lastStatusCode,
  lastError: row.lastError,
});

export type WebhookService = ReturnType<typeof createWebhookService>;

export function createWebhookService(deps: { store: WebhookStore; clock: () => Date; allowPrivate: boolean }) {
  const { store, clock } = deps;
  // The registration-time half of the SSRF policy (names are resolved and checked on each connect).
  const guard = createOriginGuard({ subject: WEBHOOK_URL, allowPrivate: deps.allowPrivate });
  const tenantsOf = (row: WebhookSubscriptionRow) => JSON.parse(row.tenants) as string[];
  /** The subscription, if the caller may manage it: 404 when there is none, 403 outside its tenants. */
  const managed = async (id: string, principal: Principal) => {
    const row = await store.subscription(id);
    if (!row) throw new ProblemError("NOT_FOUND", `no webhook subscription ${id}`);
    assertTenants(principal, tenantsOf(row));
    return row;
  };
  return {
    async subscribe(input: NewSubscription, principal: Principal) {
      const tenants = [...new Set(input.tenants ?? [])];
      assertTenants(principal, tenants);
      const url = guard.checkUrl(input.url).href;
      const row: WebhookSubscriptionRow = {
        id: `wh_${crypto.randomUUID().replaceAll("-", "")}`,
        url,
        secret: newWebhookSecret(),
        events: JSON.stringify([...new Set(input.events ?? [])]),
        tenants: JSON.stringify(tenants),
        createdAt: clock().getTime(),
      };
      await store.addSubscription(row);
      // The only time the secret leaves the server.
      return { ...view(row), secret: row.secret };
    },
    async list(principal: Principal) {
      return (await store.subscriptions()).filter((row) => coversTenants(principal, tenantsOf(row))).map(view);
    },
    async remove(id: string, principal: Principal) {
      await managed(id, principal);
      if (!(await store.removeSubscription(id))) throw new ProblemError("NOT_FOUND", `no webhook subscription ${id}`);
    },
    async deliveries(id: string, limit: number, principal: Principal) {
      await managed(id, principal);
      return (await store.deliveries(id, limit)).map(deliveryView);
    },
    async retry(id: string, deliveryId: string, principal: Principal) {
      await managed(id, principal);
      if (!(await store.retry(id, deliveryId, clock().getTime())))
        throw new ProblemError("NOT_FOUND", `no delivery ${deliveryId} of webhook subscription ${id}`);
    },
  };
}
