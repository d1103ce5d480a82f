/**
 * Webhooks end to end: the app on a real socket, a real receiver on 127.0.0.1 verifying every
 * request with the `standardwebhooks` package (not our code). Event types and bodies, redelivery
 * with the same webhook-id, backoff to `failed` and a retry through the API, the SSRF refusal at
 * registration, and the admin guard.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { appOptions, parseConfig } from "../../src/config.js";
import { backoffMs } from "../../src/services/webhook-deliverer.js";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";
import { eventually, type Receiver, startReceiver } from "./receiver.js";
import { UNSET_DESCRIPTION } from "../helpers/descriptions.js";

interface Created {
  id: string;
  secret: string;
  url: string;
  events: string[];
  tenants: string[];
}
interface Delivery {
  id: string;
  type: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

const subscribe = async (app: TestApp, body: Record<string, unknown>) => {
  const res = await app.fetch(`${API}/webhooks`, json(body));
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Created;
};
const deliveries = async (app: TestApp, id: string) =>
  ((await (await app.fetch(`${API}/webhooks/${id}/deliveries`)).json()) as { deliveries: Delivery[] }).deliveries;

describe("webhooks", () => {
  let app: TestApp;
  let receiver: Receiver;
  afterEach(async () => {
    await app?.close();
    await receiver?.close();
  });

  it("sends every event type, signed (standardwebhooks verifies), in order, with the resource's data", async () => {
    app = await startTestApp({ CMS_WEBHOOK_POLL_MS: "50" });
    receiver = await startReceiver();
    const sub = await subscribe(app, { url: receiver.url });
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const listed = await (await app.fetch(`${API}/webhooks`)).json();
    expect(listed).toEqual({ webhooks: [expect.objectContaining({ id: sub.id, url: receiver.url, events: [] })] });
    expect(JSON.stringify(listed)).not.toContain(sub.secret);

    const client = cmsClient(app, "acme");
    const created = await client.create();
    const lock = await client.lock(created.resourceUID);
    const locked = { resourceUID: created.resourceUID, author: "Author", lockID: lock.lockID };
    expect((await client.post("updateResource", { ...locked, resourceAuthor: "B" })).status).toBe(200);
    expect((await client.post("unlockResourceDTO", locked)).status).toBe(204);
    const again = await client.lock(created.resourceUID);
    expect(
      (
        await client.post("deleteResource", {
          resourceUID: created.resourceUID,
          author: "Author",
          lockID: again.lockID,
        })
      ).status,
    ).toBe(200);
    expect((await client.post("purgeResource", { resourceUID: created.resourceUID })).status).toBe(200);

    await receiver.waitFor(7);
    const events = receiver.verified(sub.secret);
    expect(events.map((e) => e.event.type)).toEqual([
      "resource.created",
      "resource.locked",
      "resource.updated",
      "resource.unlocked",
      "resource.locked",
      "resource.deleted",
      "resource.purged",
    ]);
    expect(new Set(events.map((e) => e.id)).size).toBe(7);
    expect(events[0]?.event.data).toEqual({
      resourceUID: created.resourceUID,
      resourceURI: created.resourceURI,
      resourceTenantId: "acme",
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      size: 5,
      mediaType: "text/plain",
      revision: 1,
      ...UNSET_DESCRIPTION, // issue 38
      actor: null,
    });
    expect(events[2]?.event.data.revision).toBe(2);
    expect(receiver.received[0]?.headers["content-type"]).toBe("application/json");
    // A wrong secret does not verify: the check above is a real one.
    expect(() => receiver.verified(`whsec_${btoa("not the secret")}`)).toThrow();
    console.log("one delivery:", JSON.stringify(receiver.received[0]));
  });

  it("backs off to failed on non-2xx (same webhook-id each attempt), then delivers on an API retry", async () => {
    app = await startTestApp({
      CMS_WEBHOOK_POLL_MS: "50",
      CMS_WEBHOOK_RETRY_BASE_MS: "100",
      CMS_WEBHOOK_MAX_ATTEMPTS: "3",
      CMS_METRICS_ENABLED: "true",
    });
    receiver = await startReceiver();
    receiver.status = 500;
    const sub = await subscribe(app, { url: receiver.url, events: ["resource.created"] });
    const start = Date.now();
    await cmsClient(app, "acme").create();
    const [failed] = await eventually(async () => {
      const list = await deliveries(app, sub.id);
      return list[0]?.status === "failed" ? list : undefined;
    });
    // Two backoffs: at least 50 % of 100 ms, then of 200 ms (jitter scales each by 50–100 %).
    expect(Date.now() - start).toBeGreaterThanOrEqual(150);
    expect(failed).toMatchObject({ type: "resource.created", attempts: 3, lastStatusCode: 500 });
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([failed?.id]));

    receiver.status = 200;
    const retry = await app.fetch(`${API}/webhooks/${sub.id}/deliveries/${failed?.id}/retry`, { method: "POST" });
    expect(retry.status).toBe(202);
    await receiver.waitFor(4);
    const [event] = receiver.verified(sub.secret).slice(3);
    expect(event?.id).toBe(failed?.id);
    await eventually(async () => ((await deliveries(app, sub.id))[0]?.status === "delivered" ? true : undefined));
    // Operators see it on /metrics: deliveries by outcome, and an empty outbox again.
    // Counted just after the outcome is stored: scrape until the last attempt shows (no race with the API's read).
    const scraped = await eventually(async () => {
      const text = await (await fetch(app.url("/metrics"))).text();
      return text.includes('cms_webhook_deliveries_total{outcome="delivered"} 1') ? text : undefined;
    }, 5_000);
    expect(scraped).toContain('cms_webhook_deliveries_total{outcome="retried"} 2');
    expect(scraped).toContain('cms_webhook_deliveries_total{outcome="failed"} 1');
    expect(scraped).toContain('cms_webhook_deliveries_total{outcome="delivered"} 1');
    expect(scraped).toMatch(/^cms_webhook_outbox_pending 0$/m);
    expect(scraped).toMatch(/^cms_webhook_oldest_pending_seconds 0$/m);
    const missing = await app.fetch(`${API}/webhooks/${sub.id}/deliveries/msg_nope/retry`, { method: "POST" });
    await expectProblem(missing, 404, "NOT_FOUND");
    expect((await app.fetch(`${API}/webhooks/${sub.id}`, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await app.fetch(`${API}/webhooks/${sub.id}`, { method: "DELETE" }), 404, "NOT_FOUND");
  });

  it("caps the backoff at CMS_WEBHOOK_RETRY_MAX_MS: an hour's base delay still retries within the cap", async () => {
    app = await startTestApp({
      CMS_WEBHOOK_POLL_MS: "50",
      CMS_WEBHOOK_RETRY_BASE_MS: "3600000",
      CMS_WEBHOOK_RETRY_MAX_MS: "100",
      CMS_WEBHOOK_MAX_ATTEMPTS: "3",
    });
    receiver = await startReceiver();
    receiver.status = 503;
    const sub = await subscribe(app, { url: receiver.url, events: ["resource.created"] });
    await cmsClient(app, "acme").create();
    // Uncapped, the second attempt would wait 30–60 minutes; capped, each waits at most 100 ms.
    const [failed] = await eventually(async () => {
      const list = await deliveries(app, sub.id);
      return list[0]?.status === "failed" ? list : undefined;
    }, 5_000);
    expect(failed).toMatchObject({ attempts: 3, lastStatusCode: 503 });
    expect(receiver.received).toHaveLength(3);
  });

  it("stops without waiting out a hanging receiver: the claim is given back, no attempt counted", async () => {
    app = await startTestApp({ CMS_WEBHOOK_POLL_MS: "3600000" }); // the default 10 s timeout
    receiver = await startReceiver();
    receiver.hold = true;
    const sub = await subscribe(app, { url: receiver.url });
    await cmsClient(app, "acme").create();
    const pump = app.deps.webhookDeliverer.pump();
    pump.poke();
    await receiver.waitFor(1);
    const started = performance.now();
    await pump.stop();
    expect(performance.now() - started).toBeLessThan(5_000);
    const [row] = await app.deps.store.webhooks.deliveries(sub.id, 10);
    expect(row).toMatchObject({ status: "pending", attempts: 0, claimedUntil: null, lastError: null });
    // Due again at once: the next pass delivers it.
    receiver.hold = false;
    expect(await app.deps.webhookDeliverer.pass()).toEqual({ delivered: 1, retried: 0, failed: 0 });
  });

  it("does not follow a receiver's redirect, and says so naming the webhook URL (not resourceExternalURI)", async () => {
    app = await startTestApp({ CMS_WEBHOOK_MAX_ATTEMPTS: "1", CMS_WEBHOOK_POLL_MS: "3600000" });
    receiver = await startReceiver(); // where the redirect points: it must get nothing
    const redirecting = createServer((_req, res) => res.writeHead(307, { location: receiver.url }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`;
      const sub = await subscribe(app, { url });
      await cmsClient(app, "acme").create();
      expect(await app.deps.webhookDeliverer.pass()).toEqual({ delivered: 0, retried: 0, failed: 1 });
      const [failed] = await deliveries(app, sub.id);
      expect(failed?.lastError).toBe("webhook URL answered 307, a redirect, which is not followed");
      expect(receiver.received).toHaveLength(0);
    } finally {
      redirecting.close();
    }
  });

  it("refuses a loopback, private or localhost receiver with 422 naming the url unless CMS_FETCH_ALLOW_PRIVATE", async () => {
    app = await startTestApp({ CMS_FETCH_ALLOW_PRIVATE: "false" });
    for (const url of [
      "http://127.0.0.1:9/hook",
      "http://10.0.0.1/",
      "http://[::1]/",
      "http://localhost/",
      "ftp://x.example/",
    ]) {
      const res = await app.fetch(`${API}/webhooks`, json({ url }));
      await expectProblem(res, 422, "ORIGIN_REFUSED", "/json/url");
    }
    await expectProblem(await app.fetch(`${API}/webhooks`, json({ url: 1 })), 400, "VALIDATION_FAILED", "/json/url");
    expect(await (await app.fetch(`${API}/webhooks`)).json()).toEqual({ webhooks: [] });
  });
});

describe("webhook backoff", () => {
  it("keeps every backoff delay under the cap (default one hour), jitter included", () => {
    const { retryMaxMs } = appOptions(parseConfig({})).webhooks;
    expect(retryMaxMs).toBe(3_600_000);
    const cap = { baseMs: 1_000, maxMs: retryMaxMs };
    for (const attempts of [1, 12, 13, 40, 1000])
      for (const random of [0, 0.5, 1]) expect(backoffMs(cap, attempts, random)).toBeLessThanOrEqual(retryMaxMs);
    // Jitter still spreads retries at the cap: 50–100 % of it.
    expect(backoffMs(cap, 40, 0)).toBe(1_800_000);
    expect(backoffMs(cap, 2, 1)).toBe(2_000); // below the cap: doubles as before
  });
});

describe("webhooks admin guard", () => {
  let stack: AuthStack;
  beforeAll(async () => {
    stack = await startAuthStack();
  });
  afterAll(() => stack.close());

  it("answers 401 without a token and 403 to creators and consumers, on every route", async () => {
    const creator = await stack.forge({ resource_access: { "cms-server": { roles: ["creator", "consumer"] } } });
    const admin = await stack.forge({ resource_access: { "cms-server": { roles: ["admin"] } } });
    const routes: [string, string][] = [
      ["POST", "/webhooks"],
      ["GET", "/webhooks"],
      ["DELETE", "/webhooks/x"],
      ["GET", "/webhooks/x/deliveries"],
      ["POST", "/webhooks/x/deliveries/y/retry"],
    ];
    for (const [method, path] of routes) {
      const body = method === "POST" ? JSON.stringify({ url: "https://hooks.example.com/" }) : undefined;
      const headers = { "content-type": "application/json" };
      const send = (auth: Record<string, string>) =>
        stack.app.fetch(`${API}${path}`, { method, body, headers: { ...headers, ...auth } });
      await expectProblem(await send({}), 401, "UNAUTHENTICATED");
      await expectProblem(await send(bearer(creator)), 403, "FORBIDDEN");
    }
    const res = await stack.app.fetch(`${API}/webhooks`, { headers: bearer(admin) });
    expect(res.status).toBe(200);
  });
});
