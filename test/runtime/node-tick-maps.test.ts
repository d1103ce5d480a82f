/**
 * Node's tick objects keep their hidden classes across a full GC: the Node entry keeps one tick
 * object alive (runtime/node/tick-maps.ts), so `process.nextTick`'s literal stays monomorphic.
 *
 * Without it, a full GC while no tick object is alive (an idle process) collects the classes, and
 * all but the first of the literal's property definitions turn megamorphic for the life of the process:
 * every later tick object is built in V8's runtime (≈ 2 µs of CPU more per 4 KiB GET, issue 36).
 * V8's own feedback says which: `%DebugPrint` (release builds too) lists each feedback slot of
 * nextTick with its state. Each case runs in its own process, the one the GC and feedback belong to.
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { transform } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SOURCE = new URL("../../src/runtime/node/tick-maps.ts", import.meta.url);
const dir = mkdtempSync(path.join(tmpdir(), "tick-maps-"));
/** The module as JavaScript, for a plain `node` child: under tsx's loader the child's V8 output is cut short. */
let MODULE = "";
beforeAll(async () => {
  const { code } = await transform(await readFile(SOURCE, "utf8"), { loader: "ts", format: "esm" });
  const file = path.join(dir, "tick-maps.mjs");
  writeFileSync(file, code);
  MODULE = pathToFileURL(file).href;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The child: optionally the module, ticks, a full GC with none alive, ticks again, nextTick's feedback. */
const script = (withModule: boolean) => `
${withModule ? `const { keptTickObject } = await import(${JSON.stringify(MODULE)});` : "const keptTickObject = undefined;"}
function noop() {}
const ticks = async () => {
  for (let i = 0; i < 1000; i++) process.nextTick(noop);
  await new Promise((resolve) => setImmediate(resolve));
};
await ticks();
globalThis.gc();
await ticks();
console.log(JSON.stringify({ keptKeys: keptTickObject ? Reflect.ownKeys(keptTickObject).map(String) : null }));
%DebugPrint(process.nextTick);
`;

/** The states of nextTick's literal slots, and what the child kept. */
function afterIdleGc(withModule: boolean) {
  // Into a file: V8 prints with C stdio, and on a pipe (which Node makes non-blocking) a loaded
  // machine cut its output short.
  const out = path.join(dir, `stdout-${withModule}.txt`);
  const fd = openSync(out, "w");
  let child: ReturnType<typeof spawnSync>;
  try {
    child = spawnSync(
      process.execPath,
      ["--expose-gc", "--allow-natives-syntax", "--input-type=module", "--eval", script(withModule)],
      { stdio: ["ignore", fd, "pipe"], encoding: "utf8", timeout: 60_000 },
    );
  } finally {
    closeSync(fd);
  }
  expect(child.status, String(child.stderr)).toBe(0);
  const stdout = readFileSync(out, "utf8");
  const states = [...stdout.matchAll(/slot #\d+ DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]);
  const kept = JSON.parse(stdout.split("\n").find((line) => line.startsWith('{"keptKeys"')) as string) as {
    keptKeys: string[] | null;
  };
  return { states, keptKeys: kept.keptKeys };
}

describe("the Node entry keeps nextTick's tick objects on their hidden classes (issue 36)", () => {
  it("after a full GC with no tick alive, nextTick's literal stays monomorphic", () => {
    const without = afterIdleGc(false);
    // One slot per property of the literal (four on Node 20, five on 22: its async context frame)…
    expect(without.states.length).toBeGreaterThanOrEqual(4);
    // …and without the module V8 turns them megamorphic: the case below can tell.
    expect(without.states, "V8 kept the feedback: this test cannot see anything").toContain("MEGAMORPHIC");

    const kept = afterIdleGc(true);
    expect(kept.states).toEqual(without.states.map(() => "MONOMORPHIC"));
    // What is kept is one of nextTick's own objects: its async-id symbols, callback and args.
    expect(kept.keptKeys).toEqual(
      expect.arrayContaining(["callback", "args", "Symbol(async_id_symbol)", "Symbol(trigger_async_id_symbol)"]),
    );
  });

  it("is imported by src/node.ts right after the V8 flags, before any module's start-up work", async () => {
    const entry = await readFile(new URL("../../src/node.ts", import.meta.url), "utf8");
    const imports = entry.match(/^import .*$/gm) ?? [];
    expect(imports.slice(0, 2)).toEqual([
      'import "./runtime/node/v8-flags.js";',
      'import "./runtime/node/tick-maps.js";',
    ]);
  });
});
