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

/** Projects whose files each keep a core busy (Chromium, workerd, podman): vitest.config.ts's heavy lane. */
const HEAVY_PROJECTS = new Set(["heavy", "workers"]);
/** How many heavy files may run at once: the rest of the group's workers take files that wait on processes. */
export const HEAVY_AT_ONCE = 2;
/** What a file not measured yet is taken to cost when the order is planned (it still goes first). */
const UNMEASURED_MS = 60_000;

export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const root = this.ctx.config.root;
    // A file not measured yet counts as slow: new files are often the ones nobody has timed.
    const cost = (spec: TestSpecification) =>
      durations[keyOf(root, spec.project.name, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    const slowestFirst = [...files].sort((a, b) => {
      const [ca, cb] = [cost(a), cost(b)];
      return ca === cb ? 0 : ca > cb ? -1 : 1;
    });
    // vitest runs each sequence.groupOrder to its end before the next: each group is planned alone.
    const groups = new Map<number, TestSpecification[]>();
    for (const spec of slowestFirst) {
      const order = spec.project.config.sequence.groupOrder ?? 0;
      groups.set(order, [...(groups.get(order) ?? []), spec]);
    }
    return [...groups.entries()]
      .sort(([a], [b]) => a - b)
      .flatMap(([, specs]) => {
        const workers = specs[0]?.project.config.maxWorkers ?? this.ctx.config.maxWorkers ?? 1;
        return planned(specs, (spec) => Math.min(cost(spec), UNMEASURED_MS), workers);
      });
  }
}

/**
 * vitest hands a group's files to its workers in this order, each to the first worker free. Planned
 * the same way with the measured durations, the slowest file that may start next is taken: a heavy
 * file only while fewer than HEAVY_AT_ONCE are running (if only heavy files are left, the next one).
 */
export function planned(
  slowestFirst: TestSpecification[],
  cost: (spec: TestSpecification) => number,
  workers: number,
): TestSpecification[] {
  const isHeavy = (spec: TestSpecification) => HEAVY_PROJECTS.has(spec.project.name);
  const left = [...slowestFirst];
  const order: TestSpecification[] = [];
  const running: { until: number; heavy: boolean }[] = [];
  let now = 0;
  while (left.length > 0) {
    if (running.length === workers) {
      running.sort((a, b) => a.until - b.until);
      now = (running.shift() as { until: number }).until;
    }
    const heavyRunning = running.filter((job) => job.heavy && job.until > now).length;
    const at = left.findIndex((spec) => !isHeavy(spec) || heavyRunning < HEAVY_AT_ONCE);
    const [next] = left.splice(Math.max(at, 0), 1) as [TestSpecification];
    order.push(next);
    running.push({ until: now + cost(next), heavy: isHeavy(next) });
  }
  return order;
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
