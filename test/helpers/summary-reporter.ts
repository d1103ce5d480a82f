/**
 * A vitest reporter that ends the run with the plain line "N passed, N failed" (CI reads it).
 * A module that failed without a failed test of its own (it did not load, or a beforeAll threw and
 * its tests were skipped) counts as one failure, and so does each unhandled error.
 */
import type { Reporter, TestModule } from "vitest/node";

export class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    for (const mod of testModules) {
      const tests = [...mod.children.allTests()];
      if (mod.state() === "failed" && !tests.some((t) => t.result().state === "failed")) failed++;
      for (const test of tests) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  }
}
