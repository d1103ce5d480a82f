/**
 * The deliverer: claims due outbox rows (a lease per row, so one instance at a time delivers each and
 * a crashed instance's claims are taken over once their lease ends), POSTs each signed body, and
 * records the outcome: delivered on 2xx, else retried with exponential backoff and jitter until
 * `maxAttempts`, then `failed`.
 *
 * Deliveries go out per subscriber, not in rounds (issue 41): a subscription has at most
 * `perSubscriber` deliveries in flight (the claim counts every instance's), subscriptions take turns
 * in each claim, and each finished delivery frees its slot for the next claim at once. A receiver
 * that hangs until the timeout holds its own slots only; the others' deliveries keep flowing.
 *
 * Runtime-free and built once per app (runtime/app-deps.ts): Node and Bun keep one pump and poke it on
 * a timer (runtime/host/webhook-schedule.ts), the Worker runs a pass after each write and on cron.
 */
import type { Logger } from "../lib/logger.js";
import type { Metrics } from "../metrics/metrics.js";
import type { WebhookStore } from "../metadata/webhook-store.js";
import type { WebhookDeliveryRow } from "../metadata/schema.js";
import type { FetchOrigin } from "../origin/fetch-origin.js";
import { signedHeaders } from "./webhook-signing.js";

export interface WebhookDelivererOptions {
  store: WebhookStore;
  /** The SSRF-safe fetcher: checks and pins the receiver's address on each connect. */
  send: FetchOrigin;
  now: () => number;
  logger: Logger;
  timeoutMs: number;
  maxAttempts: number;
  retryBaseMs: number;
  /** The longest delay between attempts, however many came before. */
  retryMaxMs: number;
  /**
   * Deliveries in flight at once per pump, all subscribers together. A healthy receiver waits only
   * when more than concurrency ÷ perSubscriber receivers hang at the same time (16 by default).
   * @default 128
   */
  concurrency?: number;
  /**
   * Deliveries in flight at once per subscription, every instance's together.
   * @default 8
   */
  perSubscriber?: number;
  /** Counts each attempt's outcome (cms_webhook_deliveries_total). */
  metrics?: Pick<Metrics, "webhookDelivery">;
}

export interface DeliveryFigures {
  delivered: number;
  retried: number;
  failed: number;
}

/** A long-lived delivery loop (Node/Bun): claims whenever a delivery finishes or it is poked. */
export interface DeliveryPump {
  /** Looks for due deliveries now (joining a look under way); never waits for them. */
  poke(): void;
  /**
   * Looks now, then resolves once nothing is in flight and a look finds nothing due: the idle signal
   * tests await instead of sleeping.
   */
  drain(): Promise<void>;
  /** The outcomes recorded since the previous call. */
  takeFigures(): DeliveryFigures;
  /** Stops looking and cuts what is in flight short: those claims are given back, no attempt counted. */
  stop(): Promise<void>;
}

export interface WebhookDeliverer {
  /**
   * Delivers what is due, and what falls due meanwhile, on a pump of its own (so a Worker's pass never
   * waits on another request's I/O); resolves with the outcomes once it is drained. Never throws
   * for a receiver's fault.
   */
  pass(): Promise<DeliveryFigures>;
  /** A pump for a process that delivers in the background. */
  pump(): DeliveryPump;
}

/**
 * Delay before attempt `attempts + 1`: base · 2^(attempts-1), at most `maxMs`, scaled by a random
 * 50–100 % (jitter, applied after the cap so retries at the cap stay spread out).
 */
export const backoffMs = (delay: { baseMs: number; maxMs: number }, attempts: number, random = Math.random()) =>
  Math.round(Math.min(delay.maxMs, delay.baseMs * 2 ** Math.min(attempts - 1, 30)) * (0.5 + random / 2));

const noFigures = (): DeliveryFigures => ({ delivered: 0, retried: 0, failed: 0 });

export function createWebhookDeliverer(o: WebhookDelivererOptions): WebhookDeliverer {
  const concurrency = o.concurrency ?? 128;
  const perSubscriber = o.perSubscriber ?? 8;
  // Longer than any attempt can take, so a live claim is never taken over.
  const leaseMs = 2 * o.timeoutMs + 1_000;
  const encoder = new TextEncoder();
  const delay = { baseMs: o.retryBaseMs, maxMs: o.retryMaxMs };

  async function attempt(
    row: WebhookDeliveryRow,
    signal: AbortSignal,
  ): Promise<{ statusCode: number | null; error: string | null }> {
    const subscription = await o.store.subscription(row.subscriptionId);
    if (!subscription) return { statusCode: null, error: "subscription removed" };
    const headers = await signedHeaders(subscription.secret, row.id, Math.floor(o.now() / 1000), row.payload);
    // Which instance sends which webhook-id (every line names its instance): the trace an operator
    // follows when a receiver reports a duplicate, or a claim sits until its lease ends.
    o.logger.debug("webhook delivery attempt", {
      id: row.id,
      subscription: row.subscriptionId,
      attempt: row.attempts + 1,
      // The claim's lease (epoch ms): before it ends no other instance sends this webhook-id.
      claimedUntil: row.claimedUntil,
    });
    try {
      const res = await o.send(subscription.url, {
        send: {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/json" },
          body: new Uint8Array(encoder.encode(row.payload)),
        },
        anyStatus: true,
        signal,
      });
      await res.body.cancel().catch(() => {}); // the answer's body means nothing to us
      const ok = res.status >= 200 && res.status <= 299;
      return { statusCode: res.status, error: ok ? null : `receiver answered ${res.status}` };
    } catch (err) {
      return { statusCode: null, error: err instanceof Error ? err.message : String(err) };
    }
  }

  function createPump(): DeliveryPump {
    const inFlight = new Set<Promise<void>>();
    const stopping = new AbortController();
    let looking: Promise<void> | null = null;
    let lookAgain = false;
    let figures = noFigures();
    const waiters: (() => void)[] = [];

    const settle = () => {
      if (looking === null && inFlight.size === 0) for (const wake of waiters.splice(0)) wake();
    };

    async function deliver(row: WebhookDeliveryRow) {
      const claimedUntil = row.claimedUntil ?? 0;
      const { statusCode, error } = await attempt(row, stopping.signal);
      // Cut short by stop(): not the receiver's fault, so the next instance (or start) tries again at once.
      if (error !== null && stopping.signal.aborted) return o.store.release(row.seq, claimedUntil);
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

    function start(row: WebhookDeliveryRow) {
      const done: Promise<void> = deliver(row)
        // A store that failed here leaves the claim to lapse: the row is tried again after its lease.
        .catch((err: unknown) => o.logger.warn("webhook delivery not recorded", { id: row.id, error: err }))
        .finally(() => {
          inFlight.delete(done);
          poke(); // its slot is free: the next due delivery goes now, not at the next tick
          settle();
        });
      inFlight.add(done);
    }

    async function look() {
      do {
        lookAgain = false;
        const room = concurrency - inFlight.size;
        if (room <= 0 || stopping.signal.aborted) return;
        for (const row of await o.store.claim(o.now(), leaseMs, room, perSubscriber)) start(row);
      } while (lookAgain && !stopping.signal.aborted);
    }

    function poke() {
      if (stopping.signal.aborted) return;
      if (looking) {
        lookAgain = true;
        return;
      }
      looking = look()
        .catch((err: unknown) => o.logger.warn("webhook delivery pass failed", { error: err }))
        .finally(() => {
          looking = null;
          settle();
        });
    }

    return {
      poke,
      drain() {
        poke();
        return new Promise<void>((resolve) => {
          waiters.push(resolve);
          settle();
        });
      },
      takeFigures() {
        const taken = figures;
        figures = noFigures();
        return taken;
      },
      async stop() {
        stopping.abort(new Error("the deliverer is stopping"));
        // A look under way may still start deliveries (cut short at once): wait for those too.
        while (looking !== null || inFlight.size > 0) await Promise.all([looking, ...inFlight]);
      },
    };
  }

  return {
    async pass() {
      const pump = createPump();
      await pump.drain();
      return pump.takeFigures();
    },
    pump: createPump,
  };
}
