/**
 * One writer at a time for the CLI's small shared files (src/cli/file-lock.ts), on real files:
 * read-change-write by many at once loses nothing, a lock left by a killed process is taken over
 * once stale, and a live one is waited for.
 */
import { mkdtemp, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withFileLock } from "../../src/cli/file-lock.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-file-lock-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const exists = (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

describe("withFileLock", () => {
  it("lets 20 read-change-writes at once each keep their change, and removes the lock after", async () => {
    const file = join(dir, "counter.json");
    await writeFile(file, "[]");
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        withFileLock(file, async () => {
          const seen = JSON.parse(await readFile(file, "utf8")) as number[];
          await new Promise((resolve) => setTimeout(resolve, 1)); // another writer would slip in here
          await writeFile(file, JSON.stringify([...seen, i]));
        }),
      ),
    );
    expect((JSON.parse(await readFile(file, "utf8")) as number[]).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    expect(await exists(`${file}.lock`)).toBe(false);
  });

  it("takes over a lock a killed process left behind once it is stale", async () => {
    const file = join(dir, "stale.json");
    await writeFile(`${file}.lock`, "");
    const old = new Date(Date.now() - 60_000);
    await utimes(`${file}.lock`, old, old);
    const started = Date.now();
    expect(await withFileLock(file, async () => "ran")).toBe("ran");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await exists(`${file}.lock`)).toBe(false);
  });

  it("waits while another holds it, then runs", async () => {
    const file = join(dir, "held.json");
    await writeFile(`${file}.lock`, ""); // fresh: held by a live writer
    let ran = false;
    const running = withFileLock(file, async () => {
      ran = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ran).toBe(false);
    await rm(`${file}.lock`);
    await running;
    expect(ran).toBe(true);
  });
});
