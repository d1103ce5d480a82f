/**
 * The deliverer: claims due outbox rows (a lease per row, so one instance at a time delivers each and
 * a crashed instance's claims are taken over once their lease ends), POSTs each signed body, and
 * records the outcome: delivered on 2xx, else retried with exponential backoff and jitter until
 * `maxAttempts`, then `failed`. Runtime-free; the host runs `pass` on a timer, the Worker from cron.
 */
import type { Logger } from "../lib/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { WebhookStore } from "../metadata/webhook-store.js";
import type { WebhookDeliveryRow } from "../metadata/schema.js";
import type { FetchOrigin } from "../origin/fetch-origin.js";
import { signedHeaders } from "./webhook-signing.js";

export interface WebhookDelivererOptions {
  store: WebhookStore;
  /** The SSRF-safe fetcher (AppDeps.webhookFetch): checks and pins the receiver's address on each connect. */
  send: FetchOrigin;
  now: () => number;
  logger: Logger;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** The longest delay between attempts, however many came before. */
  retryMaxMs: number;
  /** Deliveries claimed (and sent concurrently) per round. */
  batch?: number;
  /** Counts each attempt's outcome (cms_webhook_deliveries_total). */
  metrics?: Pick<Metrics, "webhookDelivery">;
}

export interface DeliveryFigures {
  delivered: number;
  retried: number;
  failed: number;
}

export type WebhookDeliverer = ReturnType<typeof createWebhookDeliverer>;

/**
 * Delay before attempt `attempts + 1`: base · 2^(attempts-1), at most `maxMs`, scaled by a random
 * 50–100 % (jitter, applied after the cap so retries at the cap stay spread out).
 */
export const backoffMs = (delay: { baseMs: number; maxMs: number }, attempts: number, random = Math.random()) =>
  Math.round(Math.min(delay.maxMs, delay.baseMs * 2 ** Math.min(attempts - 1, 30)) * (0.5 + random / 2));

export function createWebhookDeliverer(o: WebhookDelivererOptions) {
  const batch = o.batch ?? 32;
  // Longer than any attempt can take, so a live claim is never taken over.
  const leaseMs = 2 * o.timeoutMs + 1_000;
  const encoder = new TextEncoder();
  const delay = { baseMs: o.retryBaseMs, maxMs: o.retryMaxMs };

  async function attempt(row: WebhookDeliveryRow): Promise<{ statusCode: number | null; error: string | null }> {
    const subscription = await o.store.subscription(row.subscriptionId);
    if (!subscription) return { statusCode: null, error: "subscription removed" };
    const headers = await signedHeaders(subscription.secret, row.id, Math.floor(o.now() / 1000), row.payload);
    try {
      const res = await o.send(subscription.url, {
        send: {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/json" },
          body: new Uint8Array(encoder.encode(row.payload)),
        },
        anyStatus: true,
      });
      await res.body.cancel().catch(() => {}); // the answer's body means nothing to us
      const ok = res.status >= 200 && res.status <= 299;
      return { statusCode: res.status, error: ok ? null : `receiver answered ${res.status}` };
    } catch (err) {
      return { statusCode: null, error: err instanceof Error ? err.message : String(err) };
    }
  }

  async function deliver(row: WebhookDeliveryRow, figures: DeliveryFigures) {
    const claimedUntil = row.claimedUntil ?? 0;
    const { statusCode, error } = await attempt(row);
    const now = o.now();
    const delivered = error === null;
    const attempts = row.attempts + 1;
    const retryAt = delivered || attempts >= o.maxAttempts ? null : now + backoffMs(delay, attempts);
    await o.store.complete(row.seq, { claimedUntil, delivered, statusCode, error, now, retryAt });
    const outcome = delivered ? "delivered" : retryAt === null ? "failed" : "retried";
    figures[outcome]++;
    o.metrics?.webhookDelivery(outcome);
    if (outcome === "failed")
      o.logger.warn("webhook delivery failed", { id: row.id, subscription: row.subscriptionId, attempts, error });
  }

  return {
    /** Delivers what is due until nothing is (or `maxRounds` rounds); never throws for a receiver's fault. */
    async pass(maxRounds = 20): Promise<DeliveryFigures> {
      const figures = { delivered: 0, retried: 0, failed: 0 };
      for (let round = 0; round < maxRounds; round++) {
        const rows = await o.store.claim(o.now(), leaseMs, batch);
        if (rows.length === 0) break;
        await Promise.all(rows.map((row) => deliver(row, figures)));
      }
      return figures;
    },
  };
}
