/**
 * Figures for the closing note, logged (not thresholds: two shared CPU cores): the median
 * latency of a create without and with an active subscription (the outbox row it adds), and the
 * deliveries per second one deliverer sustains to a receiver on 127.0.0.1.
 */
import { afterAll, expect, it } from "vitest";
import { API, cmsClient } from "../helpers/cms-client.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";
import { type Receiver, startReceiver } from "./receiver.js";

let app: TestApp;
let receiver: Receiver;
afterAll(async () => {
  await app?.close();
  await receiver?.close();
});

/** Creates per median (60: a stable median at a fraction of the suite's time; more did not move it). */
const N = 60;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function createLatencies(n: number): Promise<number[]> {
  const client = cmsClient(app, "acme");
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const res = await client.postCreate({ resourceName: `f${i}.txt` }, `x${i}`);
    times.push(performance.now() - start);
    expect(res.status).toBe(201);
  }
  return times;
}

it("measures create latency with and without a subscription, and one deliverer's rate", {
  timeout: 120_000,
}, async () => {
  // The host's own deliverer waits an hour between passes: the pass below is the one measured.
  app = await startTestApp({ CMS_WEBHOOK_POLL_MS: "3600000" });
  receiver = await startReceiver();
  await createLatencies(10); // warm-up
  const without = median(await createLatencies(N));
  const res = await app.fetch(`${API}/webhooks`, json({ url: receiver.url }));
  expect(res.status).toBe(201);
  const { secret } = (await res.json()) as { secret: string };
  const withSub = median(await createLatencies(N));

  const start = performance.now();
  const figures = await app.deps.webhookDeliverer.pass();
  const seconds = (performance.now() - start) / 1000;
  expect(figures).toEqual({ delivered: N, retried: 0, failed: 0 });
  expect(receiver.received).toHaveLength(N);
  expect(receiver.verified(secret)).toHaveLength(N);
  console.log(
    `webhook figures: create median ${without.toFixed(2)} ms without a subscription, ${withSub.toFixed(2)} ms with one; ` +
      `one deliverer: ${N} deliveries in ${seconds.toFixed(2)} s = ${(N / seconds).toFixed(0)}/s`,
  );
});
