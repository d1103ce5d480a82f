/**
 * The suite's order: slowest files first, so the last files to start are short ones and no worker
 * is left running a 3-minute Chromium file alone at the end. vitest orders by its own cache of past
 * durations, which a fresh CI clone does not have (it then falls back to file size, and the thin
 * files that drive Chromium ran last); `test/durations.json` is that knowledge, committed.
 * `npm run test:durations` measures it again.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule, TestSpecification } from "vitest/node";
import { BaseSequencer } from "vitest/node";

const DURATIONS = new URL("../durations.json", import.meta.url);

type Durations = Record<string, number>;

function readDurations(): Durations {
  try {
    return JSON.parse(readFileSync(DURATIONS, "utf8")) as Durations;
  } catch {
    return {};
  }
}

const keyOf = (root: string, project: string, moduleId: string) => `${project}:${relative(root, moduleId)}`;

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const root = this.ctx.config.root;
    // A file not measured yet counts as slow: new files are often the ones nobody has timed.
    const cost = (spec: TestSpecification) =>
      durations[keyOf(root, spec.project.name, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => {
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const [ca, cb] = [cost(a), cost(b)];
      return ca === cb ? 0 : ca > cb ? -1 : 1;
    });
  }
}

/** Writes each file's wall time to test/durations.json at the end of a run that sets CMS_TEST_DURATIONS=write. */
export class DurationsRecorder implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    if (process.env.CMS_TEST_DURATIONS !== "write") return;
    const durations = readDurations();
    for (const mod of testModules) {
      const root = mod.project.config.root;
      const d = mod.diagnostic();
      const wall = d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
      durations[keyOf(root, mod.project.name, mod.moduleId)] = Math.round(wall / 100) * 100;
    }
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)));
    writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
