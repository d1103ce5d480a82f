/**
 * Webhook subscriptions for admins: register (the receiver's URL checked against the SSRF policy
 * here, and again by the deliverer's fetcher on each connect), list, remove, inspect deliveries, retry one.
 * A tenant-confined admin sees and manages only subscriptions limited to its tenants (auth/principal.ts).
 */
import { assertTenants, coversTenants, type Principal } from "../auth/principal.js";
import type { WebhookStore } from "../metadata/webhook-store.js";
import type { WebhookDeliveryRow, WebhookEventType, WebhookSubscriptionRow } from "../metadata/schema.js";
import { isLocalhostName } from "../origin/host-names.js";
import { ipVersion, isGlobalUnicast, specialPurposeRange, unbracket } from "../origin/ip-address.js";
import { parseOriginUrl } from "../origin/policy.js";
import { isProblemError, ProblemError } from "../problems.js";
import { newWebhookSecret } from "./webhook-signing.js";

export interface NewSubscription {
  url: string;
  events?: WebhookEventType[];
  tenants?: string[];
}

const refused = (detail: string) =>
  new ProblemError("ORIGIN_REFUSED", detail, { errors: [{ pointer: "/json/url", detail }] });

/**
 * The registration-time half of the SSRF policy: scheme, credentials, port, and a host that is a
 * loopback/private literal or a localhost name. Names are resolved and checked on each connect.
 */
function checkReceiverUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = parseOriginUrl(raw);
  } catch (err) {
    if (isProblemError(err)) throw refused(err.message.replace("resourceExternalURI", "url"));
    throw err;
  }
  if (allowPrivate) return url.href;
  const host = unbracket(url.hostname);
  if (ipVersion(host) !== 0 && !isGlobalUnicast(host))
    throw refused(`url host ${host} is not allowed: ${specialPurposeRange(host) ?? "not a global address"}`);
  if (isLocalhostName(host)) throw refused(`url host ${host} is not allowed: localhost names are loopback (RFC 6761)`);
  return url.href;
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
      const url = checkReceiverUrl(input.url, deps.allowPrivate);
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
