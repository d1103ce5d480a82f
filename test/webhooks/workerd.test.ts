/**
 * The Worker's delivery path in workerd: the bundle as deployed, run by Miniflare with D1 and R2,
 * posting to a real receiver on 127.0.0.1 (workerd reaches loopback; CMS_FETCH_ALLOW_PRIVATE lets the
 * policy through). After a write it delivers in `waitUntil`, without holding the write's answer; a
 * delivery the write's pass could not make (receiver down) is made by the cron trigger's
 * `scheduled` handler once its backoff is due. Signatures are checked with the `standardwebhooks` package.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { API } from "../helpers/cms-client.js";
import { processClient } from "../helpers/process-client.js";
import { sharedWorkerBundle, startWorkerd, type WorkerdServer } from "../helpers/workerd.js";
import { eventually, type Receiver, startReceiver } from "./receiver.js";

/** Long: a write that waited for its delivery would take this long (the receiver hangs in the first test). */
const TIMEOUT_MS = 20_000;
/** The five-minute cron of wrangler.toml (the daily one also sweeps the bucket). */
const CRON = "*/5 * * * *";

let dir: string;
let worker: WorkerdServer;
let receiver: Receiver;
let subscription: { id: string; secret: string };

interface Delivery {
  id: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastError: string | null;
}
const deliveries = async () =>
  (
    (await (await fetch(`${worker.url}${API}/webhooks/${subscription.id}/deliveries`)).json()) as {
      deliveries: Delivery[];
    }
  ).deliveries;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-webhook-workerd-"));
  // One receiver for the file, on a port the OS picked; each test says whether it is up.
  receiver = await startReceiver();
  worker = await startWorkerd(sharedWorkerBundle(), {
    bindings: {
      CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!",
      CMS_LOG_LEVEL: "error",
      CMS_FETCH_ALLOW_PRIVATE: "true", // the receiver is on 127.0.0.1
      CMS_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      CMS_WEBHOOK_RETRY_BASE_MS: "3000", // due 1.5–3 s after a failure: room for cron passes before it
    },
  });
  const res = await fetch(`${worker.url}${API}/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url }),
  });
  expect(res.status).toBe(201);
  subscription = (await res.json()) as { id: string; secret: string };
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await worker?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("delivers after a write in waitUntil, signed, the write answered before the receiver does", async () => {
  receiver.hold = true; // the receiver hangs: the create must not wait for it
  const started = Date.now();
  const created = await processClient(worker, "acme").create();
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS / 2);
  await receiver.waitFor(1);
  receiver.release();
  const [event] = receiver.verified(subscription.secret);
  expect(event?.event).toMatchObject({
    type: "resource.created",
    data: { resourceUID: created.resourceUID, resourceTenantId: "acme", revision: 1 },
  });
  await eventually(async () => ((await deliveries())[0]?.status === "delivered" ? true : undefined));
  expect((await deliveries())[0]).toMatchObject({ id: event?.id, attempts: 1 });
  receiver.hold = false;
  receiver.received.splice(0); // the next test counts from nothing
});

it("the cron trigger delivers what the write's pass could not (receiver down), with the same webhook-id", async () => {
  // The receiver is down: the write's own pass fails and leaves the delivery pending.
  receiver.down = true;
  const created = await processClient(worker, "acme").create();
  const pending = await eventually(async () => {
    const [d] = await deliveries();
    return d?.status === "pending" && d.attempts === 1 ? d : undefined;
  });
  expect(pending.lastError).not.toBeNull();

  receiver.down = false;
  // Until the backoff is due even a cron pass leaves it alone; then the cron delivers it.
  const due = Date.parse(pending.nextAttemptAt as string);
  // Miniflare's Fetcher runs the `scheduled` handler (its types name only fetch).
  const scheduled = (await worker.mf.getWorker()) as unknown as {
    scheduled(options: { cron: string }): Promise<{ outcome: string }>;
  };
  // A pass that ended before `due` began before it too (the Worker's clock is this machine's), so
  // it must have sent nothing; one that ended later may have delivered, and the loop stops there.
  let passesBeforeDue = 0;
  for (;;) {
    expect((await scheduled.scheduled({ cron: CRON })).outcome).toBe("ok");
    if (Date.now() >= due) break;
    expect(receiver.received).toHaveLength(0);
    passesBeforeDue++;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(passesBeforeDue).toBeGreaterThan(0);
  expect((await scheduled.scheduled({ cron: CRON })).outcome).toBe("ok");
  await receiver.waitFor(1);
  const [event] = receiver.verified(subscription.secret);
  expect(event?.id).toBe(pending.id);
  expect(event?.event).toMatchObject({ type: "resource.created", data: { resourceUID: created.resourceUID } });
  expect((await deliveries())[0]).toMatchObject({ id: pending.id, status: "delivered", attempts: 2 });
});
