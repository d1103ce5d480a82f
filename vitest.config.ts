// Tool config: vitest expects a default export.
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Most files spend their time waiting on child processes (servers, Chromium, workerd), so on a
    // small machine vitest's default (cores - 1, one worker on 2 cores) leaves a core idle: 3
    // workers took the suite from 7 min to 4 min on 2 cores (4 workers: no faster).
    maxWorkers: Math.max(3, availableParallelism() - 1),
    reporters: ["default", new SummaryReporter()],
    // One run, one summary line: Node-side tests in forks, and test/workers/ inside workerd.
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/workers/**"],
          pool: "forks",
          // Process tests start the server as shipped: the esbuild bundle. rgw-global: the run's one
          // Ceph cluster (started only if a test asks for it), torn down at the end.
          globalSetup: ["test/global-setup.ts", "test/helpers/rgw-global.ts"],
        },
      },
      "./vitest.workers.config.ts",
    ],
  },
});
