/** Workers entry point: the bindings of wrangler.toml wired into the same app as Node and Bun. */
import { createWorkerApp } from "./runtime/worker/server.js";

const app = createWorkerApp();

/** The daily cron of wrangler.toml: also list the bucket for blobs D1 has no record of, to log them (the other runs only collect). */
const SWEEP_CRON = "17 3 * * *";

export default {
  fetch(request, env, ctx) {
    return app.fetch(request, env, ctx);
  },
  scheduled(controller, env, ctx) {
    ctx.waitUntil(app.collect(env, { sweep: controller.cron === SWEEP_CRON }));
  },
} satisfies ExportedHandler<Env>;
