/**
 * The build replaces its bundles atomically. `npm start` builds before it serves, so a second
 * `npm start` (or a test running it) rebuilds dist/node/server.mjs while another process may be
 * starting from it: written in place, that process read a truncated module ("SyntaxError: Unexpected
 * end of input", seen in CI). Each output is written to a temporary file beside it, then renamed.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../scripts/build.mjs";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-build-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("scripts/build.mjs", () => {
  it("replaces a bundle by renaming a complete file over it, leaving no temporary file", async () => {
    const outfile = join(dir, "server.mjs");
    await buildServer(outfile);
    const first = await stat(outfile);
    const bytes = await readFile(outfile, "utf8");
    await buildServer(outfile);
    const second = await stat(outfile);
    expect(second.ino).not.toBe(first.ino); // a new file took the name: not rewritten in place
    expect(await readFile(outfile, "utf8")).toBe(bytes);
    expect((await readdir(dir)).sort()).toEqual(["server.mjs", "server.mjs.map"]);
  });

  it("never lets a reader see a partial bundle while it rebuilds", async () => {
    const outfile = join(dir, "reader.mjs");
    await buildServer(outfile);
    const whole = (await readFile(outfile)).length;
    let building = true;
    const sizes = new Set<number>();
    const reader = (async () => {
      while (building) sizes.add((await readFile(outfile)).length);
    })();
    for (let round = 0; round < 3; round++) await buildServer(outfile);
    building = false;
    await reader;
    expect([...sizes]).toEqual([whole]);
  }, 120_000); // four whole builds of the server bundle: past 30 s at a load average of 16 (a full run and the Node 22 pass at once)
});
