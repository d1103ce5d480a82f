// Tool config: vitest expects a default export.
import { configDefaults, defineConfig } from "vitest/config";
import { SummaryReporter } from "./test/helpers/summary-reporter.js";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
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
          // Process tests start the server as shipped: the esbuild bundle.
          globalSetup: ["test/global-setup.ts"],
        },
      },
      "./vitest.workers.config.ts",
    ],
  },
});
