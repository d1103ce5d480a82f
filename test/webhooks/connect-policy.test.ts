/**
 * The SSRF policy at connect time: a deliverer whose fetcher refuses private addresses never sends a
 * byte to a receiver on 127.0.0.1, even for a subscription registered while that was allowed (a
 * registration-time check alone would not stop a name that later resolves privately).
 */
import { afterAll, expect, it } from "vitest";
import { createNodeFetchOrigin } from "../../src/origin/node-fetch.js";
import { createWebhookDeliverer } from "../../src/services/webhook-deliverer.js";
import { API, cmsClient } from "../helpers/cms-client.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";
import { type Receiver, startReceiver } from "./receiver.js";

let app: TestApp;
let receiver: Receiver;
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

it("refuses a loopback receiver on connect: the delivery fails, the receiver gets nothing", async () => {
  app = await startTestApp({ CMS_WEBHOOK_POLL_MS: "3600000" }); // allows private: the registration passes
  receiver = await startReceiver();
  const res = await app.fetch(`${API}/webhooks`, json({ url: receiver.url }));
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  await cmsClient(app, "acme").create();
  const deliverer = createWebhookDeliverer({
    store: app.deps.store.webhooks,
    send: createNodeFetchOrigin({ allowPrivate: false, maxRedirects: 0 }),
    now: () => Date.now(),
    logger: app.deps.logger,
    timeoutMs: 1000,
    maxAttempts: 1,
    retryBaseMs: 10,
    retryMaxMs: 10,
  });
  expect(await deliverer.pass()).toEqual({ delivered: 0, retried: 0, failed: 1 });
  expect(receiver.received).toHaveLength(0);
  const [delivery] = await app.deps.store.webhooks.deliveries(id, 10);
  expect(delivery).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: null });
  expect(delivery?.lastError).toMatch(/127\.0\.0\.1.*not allowed/);
});
