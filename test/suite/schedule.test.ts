/**
 * The suite's own schedule (test/helpers/slowest-first.ts): the order vitest gets puts the slowest
 * files first and never plans more than HEAVY_AT_ONCE heavy files (Chromium, workerd, podman) at once
 * while other files are left to run beside them. Checked by replaying the order the way vitest's pool
 * hands files out: each to the first worker free.
 */
import type { TestSpecification } from "vitest/node";
import { describe, expect, it } from "vitest";
import { HEAVY_AT_ONCE, planned } from "../helpers/slowest-first.js";

interface File {
  name: string;
  project: string;
  ms: number;
}

const spec = (file: File) =>
  ({ moduleId: file.name, project: { name: file.project }, file }) as unknown as TestSpecification;
const fileOf = (s: TestSpecification) => (s as unknown as { file: File }).file;

/** The most heavy files running at one moment when `order` is handed to `workers` workers. */
function mostHeavyAtOnce(order: TestSpecification[], workers: number): number {
  const running: { until: number; heavy: boolean }[] = [];
  let now = 0;
  let most = 0;
  for (const s of order) {
    if (running.length === workers) {
      running.sort((a, b) => a.until - b.until);
      now = (running.shift() as { until: number }).until;
    }
    const { project, ms } = fileOf(s);
    running.push({ until: now + ms, heavy: project === "heavy" || project === "workers" });
    most = Math.max(most, running.filter((job) => job.heavy && job.until > now).length);
  }
  return most;
}

const heavy = (name: string, ms: number): File => ({ name, project: "heavy", ms });
const node = (name: string, ms: number): File => ({ name, project: "node", ms });

describe("the suite's schedule", () => {
  // Slowest first, the four Chromium files would all start at once on four workers.
  const files = [
    heavy("try-it", 60),
    heavy("library-a", 57),
    heavy("library-b", 51),
    heavy("isolation", 39),
    { name: "r2", project: "workers", ms: 14 } satisfies File,
    node("signals", 60),
    node("pack", 47),
    node("cli", 34),
    node("cluster", 30),
    node("s3", 22),
    node("edges", 12),
    node("units", 1),
  ];
  const slowestFirst = [...files].sort((a, b) => b.ms - a.ms).map(spec);

  it("plans no more than HEAVY_AT_ONCE heavy files at once while others can run beside them", () => {
    expect(mostHeavyAtOnce(slowestFirst, 4)).toBeGreaterThan(HEAVY_AT_ONCE); // the control
    const order = planned(slowestFirst, (s) => fileOf(s).ms, 4);
    expect(mostHeavyAtOnce(order, 4)).toBe(HEAVY_AT_ONCE);
    expect(order.slice(0, 4).map((s) => fileOf(s).name)).toEqual(["try-it", "signals", "library-a", "pack"]);
  });

  it("keeps every file, and runs the heavy ones anyway when nothing else is left", () => {
    const onlyHeavy = files.filter((f) => f.project !== "node");
    const order = planned(onlyHeavy.map(spec), (s) => fileOf(s).ms, 3);
    expect(order.map((s) => fileOf(s).name).sort()).toEqual(onlyHeavy.map((f) => f.name).sort());
    const all = planned(slowestFirst, (s) => fileOf(s).ms, 3);
    expect(new Set(all)).toEqual(new Set(slowestFirst));
  });
});
