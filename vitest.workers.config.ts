// Tool config: vitest expects a default export. Tests under test/workers/ run inside workerd
// (@cloudflare/vitest-pool-workers), with the bindings of wrangler.toml simulated by Miniflare.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

// The pool reads wrangler.toml, whose [assets] directory must exist; `wrangler dev`/`deploy` make it
// through [build], the pool does not. Cheap (four file copies), so done on every run.
execFileSync(process.execPath, [fileURLToPath(new URL("./scripts/vendor-swagger.mjs", import.meta.url))], { stdio: "inherit" });

// The drizzle/ migrations, applied to the test D1 database by tests that store metadata (as
// `wrangler d1 migrations apply` does on deploy).
const migrations = await readD1Migrations(fileURLToPath(new URL("./drizzle", import.meta.url)));

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { CMS_LOG_LEVEL: "warn", CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!", TEST_MIGRATIONS: migrations },
        // Miniflare's local Images binding (sharp, in this Node process); test/workers/images.test.ts
        // also runs the Worker without it (the 501 of a deployment with no [images]).
        images: { binding: "IMAGES" },
      },
    }),
  ],
  test: {
    name: "workers",
    include: ["test/workers/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // With the heavy lane of vitest.config.ts (workerd is one): after the rest, two at a time.
    maxWorkers: 2,
    // One workerd per worker for all its files: a fresh one per file spent most of the project's
    // time importing the app again (import 245 s summed, 91 s of CPU; shared: 34 s). Each file
    // still starts on empty storage (fresh-storage.ts).
    isolate: false,
    setupFiles: ["test/workers/fresh-storage.ts"],
    sequence: { groupOrder: 1 },
    // Used when this config runs alone (`vitest run -c vitest.workers.config.ts`); vitest.config.ts runs it as a project.
    reporters: ["default", new SummaryReporter()],
  },
});
