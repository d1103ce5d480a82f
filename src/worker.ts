/** Workers entry point: the bindings of wrangler.toml wired into the same app as Node and Bun. */
import { createWorkerApp } from "./runtime/worker-deps.js";

const app = createWorkerApp();

export default {
  fetch(request, env, ctx) {
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
