/**
 * Runs the webhook deliverer in a Node/Bun process every `pollMs`, off the request path: an API
 * request only writes its outbox row. Passes never overlap; `stop` waits for the running one.
 * Every instance may run it: claims (services/webhook-deliverer.ts) keep them apart.
 */
import type { Logger } from "../../lib/logger.js";
import type { WebhookDeliverer } from "../../services/webhook-deliverer.js";
import { type PassSchedule, schedulePasses } from "./pass-schedule.js";

export function scheduleDeliveries(deliverer: WebhookDeliverer, pollMs: number, logger: Logger): PassSchedule {
  return schedulePasses(
    async () => {
      const figures = await deliverer.pass();
      if (figures.delivered + figures.retried + figures.failed > 0) logger.debug("webhooks delivered", { ...figures });
    },
    pollMs,
    (err) => logger.warn("webhook delivery pass failed", { error: err }),
  );
}
