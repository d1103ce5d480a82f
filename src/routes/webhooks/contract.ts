/** The admin webhook API (issue 31): subscriptions, their deliveries, and retrying one. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { WEBHOOK_DELIVERY_STATES, WEBHOOK_EVENT_TYPES } from "../../metadata/schema.js";
import { API_PREFIX } from "../meta.js";
import { TenantIdSchema } from "../resources/schemas.js";
import { BEARER_SECURITY } from "../router.js";

const BASE = `${API_PREFIX}/webhooks`;
const EventType = z.enum(WEBHOOK_EVENT_TYPES);

export const NewWebhookSchema = z
  .object({
    url: z.string().max(2048).openapi({ example: "https://hooks.example.com/cms" }),
    events: z
      .array(EventType)
      .max(WEBHOOK_EVENT_TYPES.length * 2)
      .optional()
      .openapi({ description: "Default: all" }),
    tenants: z
      .array(TenantIdSchema)
      .max(100)
      .optional()
      .openapi({ description: "Default: all tenants (an admin without a tenant claim only)" }),
  })
  .strict()
  .openapi("NewWebhook");

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(EventType).openapi({ description: "Empty: all" }),
    tenants: z.array(z.string()).openapi({ description: "Empty: all" }),
    createdAt: z.string(),
  })
  .openapi("Webhook");

export const CreatedWebhookSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    description: "`whsec_` + base64 HMAC key for Standard Webhooks verification; shown only in this answer",
  }),
}).openapi("CreatedWebhook");

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: "The webhook-id header; the same on every attempt" }),
    type: EventType,
    resourceUID: z.string(),
    event: z.record(z.string(), z.unknown()).openapi({ description: "The body sent" }),
    status: z.enum(WEBHOOK_DELIVERY_STATES),
    attempts: z.number().int(),
    nextAttemptAt: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
  })
  .openapi("WebhookDelivery");

const IdParams = z.object({ id: z.string().min(1).max(64) });
const DeliveryParams = IdParams.extend({ deliveryId: z.string().min(1).max(64) });

export const createWebhook = createRoute({
  method: "post",
  path: BASE,
  operationId: "createWebhook",
  tags: ["webhooks"],
  summary: "Admin: subscribe a URL to signed resource events",
  description:
    "The receiver's URL passes the external-URI SSRF policy now and on each delivery (422 ORIGIN_REFUSED for loopback or private addresses unless CMS_FETCH_ALLOW_PRIVATE).",
  security: BEARER_SECURITY,
  request: { body: { required: true, content: { "application/json": { schema: NewWebhookSchema } } } },
  responses: {
    201: { description: "Subscribed", content: { "application/json": { schema: CreatedWebhookSchema } } },
    ...problemResponses(400, 401, 403, 415, 422),
  },
});

export const listWebhooks = createRoute({
  method: "get",
  path: BASE,
  operationId: "listWebhooks",
  tags: ["webhooks"],
  summary: "Admin: the webhook subscriptions (without secrets)",
  security: BEARER_SECURITY,
  responses: {
    200: {
      description: "The subscriptions",
      content: { "application/json": { schema: z.object({ webhooks: z.array(WebhookSchema) }) } },
    },
    ...problemResponses(401, 403),
  },
});

export const deleteWebhook = createRoute({
  method: "delete",
  path: `${BASE}/{id}`,
  operationId: "deleteWebhook",
  tags: ["webhooks"],
  summary: "Admin: remove a subscription and its deliveries",
  security: BEARER_SECURITY,
  request: { params: IdParams },
  responses: { 204: { description: "Removed" }, ...problemResponses(401, 403, 404) },
});

export const listDeliveries = createRoute({
  method: "get",
  path: `${BASE}/{id}/deliveries`,
  operationId: "listWebhookDeliveries",
  tags: ["webhooks"],
  summary: "Admin: a subscription's latest deliveries, newest first",
  security: BEARER_SECURITY,
  request: {
    params: IdParams,
    query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
  },
  responses: {
    200: {
      description: "The deliveries",
      content: { "application/json": { schema: z.object({ deliveries: z.array(DeliverySchema) }) } },
    },
    ...problemResponses(400, 401, 403, 404),
  },
});

export const retryDelivery = createRoute({
  method: "post",
  path: `${BASE}/{id}/deliveries/{deliveryId}/retry`,
  operationId: "retryWebhookDelivery",
  tags: ["webhooks"],
  summary: "Admin: deliver again (same webhook-id), attempts counted afresh",
  security: BEARER_SECURITY,
  request: { params: DeliveryParams },
  responses: { 202: { description: "Queued for delivery" }, ...problemResponses(401, 403, 404) },
});
