/**
 * Node's per-request objects stay in the young generation: the Node entry turns V8's allocation-site
 * pretenuring off first thing (runtime/node/v8-flags.ts).
 *
 * With it on, a site whose objects survived scavenges during start-up (Node's tick objects among them:
 * ten `process.nextTick` per 4 KiB GET) is switched to allocate in the old generation for the life of
 * the process. A process of the shipped bundle then paid 0.5–0.9 µs per nextTick instead of 0.05–0.1
 * (issue 36), and whether it happened differed from process to process. Here the same is provoked on
 * purpose: ticks kept alive across minor GCs, then the next 100 000 ticks must not land in old space.
 * Each case runs in its own process: the flag is process-wide.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FLAGS_MODULE = new URL("../../src/runtime/node/v8-flags.ts", import.meta.url).href;

/** The child's script: optionally the entry's flags module, then ticks that survive, then 100 000 more. */
const script = (withFlags: boolean) => `
${withFlags ? `await import(${JSON.stringify(FLAGS_MODULE)});` : ""}
const v8 = await import("node:v8");
const oldSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === "old_space").space_used_size;
function noop() {}
for (let round = 0; round < 3; round++) {
  for (let i = 0; i < 100_000; i++) process.nextTick(noop);
  globalThis.gc({ type: "minor" });
  globalThis.gc({ type: "minor" });
  await new Promise((resolve) => setImmediate(resolve));
}
const before = oldSpace();
for (let i = 0; i < 100_000; i++) process.nextTick(noop);
console.log(JSON.stringify({ oldSpaceGrowth: oldSpace() - before }));
`;

function oldSpaceGrowth(withFlags: boolean): number {
  const child = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "--input-type=module", "--eval", script(withFlags)],
    { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
  );
  expect(child.status, child.stderr).toBe(0);
  return (JSON.parse(child.stdout.trim().split("\n").at(-1) as string) as { oldSpaceGrowth: number }).oldSpaceGrowth;
}

describe("the Node entry keeps short-lived objects young (V8 allocation-site pretenuring off)", () => {
  it("100 000 ticks after ticks that survived minor GCs allocate nothing in old space", () => {
    // Without the flags module V8 pretenures them (≈ 7 MB here): the case below can tell.
    expect(oldSpaceGrowth(false), "V8 did not pretenure: this test cannot see anything").toBeGreaterThan(
      2 * 1024 * 1024,
    );
    expect(oldSpaceGrowth(true)).toBeLessThan(512 * 1024);
  });

  it("is the first thing src/node.ts imports, so it runs before any module's start-up work", async () => {
    const { readFile } = await import("node:fs/promises");
    const entry = await readFile(new URL("../../src/node.ts", import.meta.url), "utf8");
    expect(entry.match(/^import .*$/m)?.[0]).toBe('import "./runtime/node/v8-flags.js";');
  });
});
