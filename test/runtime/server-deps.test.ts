/** createServerDeps opens the volume and the database, and gives the volume back when the database fails. */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { silentLogger } from "../../src/lib/logger.js";
import { createServerDeps } from "../../src/runtime/host/deps.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-deps-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("gives the volume back when the database cannot open: no temp folder stays claimed", async () => {
  await writeFile(join(dir, "not-a-directory"), "x");
  const config = parseConfig({ CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "not-a-directory", "cms.db")}` });
  await expect(createServerDeps(config, silentLogger)).rejects.toThrow();
  await mkdir(join(dir, "volume", ".tmp"), { recursive: true }); // the volume was opened: its temp root exists
  expect(await readdir(join(dir, "volume", ".tmp"))).toEqual([]);
});

it("opens both and closes both", async () => {
  const config = parseConfig({ CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
  const deps = await createServerDeps(config, silentLogger);
  expect(await readdir(join(dir, "volume", ".tmp"))).toHaveLength(1); // this process's claimed temp folder
  await deps.store.ping();
  await deps.close();
  expect(await readdir(join(dir, "volume", ".tmp"))).toEqual([]);
});
