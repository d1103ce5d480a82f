/**
 * Runs the webhook deliverer in a Node/Bun process: one pump (services/webhook-deliverer.ts), poked
 * every `pollMs` for what fell due (a finished delivery pokes it too), off the request path: an API
 * request only writes its outbox row. Each tick logs what was delivered since the last.
 * Every instance may run it: claims keep them apart. `stop` cuts deliveries in flight short (their
 * claims are given back) and waits for them, so the database can close after it.
 */
import type { Logger } from "../../lib/logger.js";
import type { DeliveryPump, WebhookDeliverer } from "../../services/webhook-deliverer.js";
import { schedulePasses } from "./pass-schedule.js";

export interface DeliverySchedule {
  /** The pump: `drain()` is the idle signal tests await. */
  pump: DeliveryPump;
  stop(): Promise<void>;
}

export function scheduleDeliveries(deliverer: WebhookDeliverer, pollMs: number, logger: Logger): DeliverySchedule {
  const pump = deliverer.pump();
  const report = () => {
    const figures = pump.takeFigures();
    if (figures.delivered + figures.retried + figures.failed > 0) logger.debug("webhooks delivered", { ...figures });
  };
  const ticks = schedulePasses(
    async () => {
      report();
      pump.poke();
    },
    pollMs,
    (err) => logger.warn("webhook delivery pass failed", { error: err }),
  );
  return {
    pump,
    async stop() {
      await ticks.stop();
      await pump.stop();
      report();
    },
  };
}
