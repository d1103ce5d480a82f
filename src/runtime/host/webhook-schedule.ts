/**
 * Runs the webhook deliverer in a Node/Bun process every `pollMs`, off the request path: an API
 * request only writes its outbox row. Passes never overlap; `stop` waits for the running one.
 * Every instance may run it: claims (services/webhook-deliverer.ts) keep them apart.
 */
import type { Logger } from "../../lib/logger.js";
import type { WebhookDeliverer } from "../../services/webhook-deliverer.js";

export function scheduleDeliveries(deliverer: WebhookDeliverer, pollMs: number, logger: Logger) {
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = deliverer
      .pass()
      .then((figures) => {
        if (figures.delivered + figures.retried + figures.failed > 0)
          logger.debug("webhooks delivered", { ...figures });
      })
      .catch((err: unknown) => logger.warn("webhook delivery pass failed", { error: err }))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, pollMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
