/**
 * createServerDeps opens the volume and the database, gives the volume back when the database fails,
 * and runs the blob collector on the app's clock.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { parseConfig } from "../../src/config.js";
import { silentLogger } from "../../src/lib/logger.js";
import { createServerDeps } from "../../src/runtime/host/deps.js";
import { createServices } from "../../src/services/index.js";
import { API } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { startTestApp } from "../helpers/test-app.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-deps-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("gives the volume back when the database cannot open: no temp folder stays claimed", async () => {
  await writeFile(join(dir, "not-a-directory"), "x");
  const config = parseConfig({
    CMS_VOLUME: join(dir, "volume"),
    CMS_DATABASE_URL: `file:${join(dir, "not-a-directory", "cms.db")}`,
  });
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

it("the scheduled collector reads the app's clock: an upload expires for it when that clock passes CMS_TUS_EXPIRY_SECONDS", async () => {
  const time = fakeClock();
  const app = await startTestApp({ CMS_TUS_EXPIRY_SECONDS: "60", CMS_GC_INTERVAL_SECONDS: "1" }, { clock: time.clock });
  try {
    const fields = { resourceTenantId: "sched", filename: "s.bin", author: "Tus" };
    const metadata = Object.entries(fields)
      .map(([k, v]) => `${k} ${Buffer.from(v).toString("base64")}`)
      .join(",");
    const created = await fetch(app.url(`${API}/uploads`), {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "10",
        "upload-metadata": metadata,
        "content-type": "application/offset+octet-stream",
      },
      body: "abc",
    });
    expect(created.status).toBe(201);
    const expired = () => app.logs.filter((l) => l.msg === "blobs collected" && Number(l.uploadsExpired) > 0);
    time.advance(61_000); // on the app's clock only: the machine's has not moved a minute
    // Waits for the schedule's next tick (every CMS_GC_INTERVAL_SECONDS), not for the expiry.
    for (let waited = 0; waited < 5000 && expired().length === 0; waited += 100)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(expired()).toHaveLength(1);
    expect(
      (
        await fetch(app.url(created.headers.get("location") as string), {
          method: "HEAD",
          headers: { "tus-resumable": "1.0.0" },
        })
      ).status,
    ).toBe(404);
  } finally {
    await app.close();
  }
});

it("builds one blob collector: the services reserve through the one the runtime schedules", async () => {
  const config = parseConfig({ CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
  const deps = await createServerDeps(config, silentLogger);
  try {
    expect(deps.collector).toBeDefined();
    expect(createServices(deps).collector).toBe(deps.collector);
    expect("config" in deps).toBe(false); // typed options, not the environment's names, go past the root
    expect(deps.options.collector.graceMs).toBe(900_000);
  } finally {
    await deps.close();
  }
});

it("CMS_IMAGE_CONCURRENCY=0 (the default) means the machine's cores, on Node 20 too (which has no navigator)", async () => {
  const config = parseConfig({ CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` });
  expect(config.CMS_IMAGE_CONCURRENCY).toBe(0);
  const deps = await createServerDeps(config, silentLogger);
  try {
    expect(deps.options.images?.concurrency).toBe(availableParallelism());
  } finally {
    await deps.close();
  }
  const fixed = await createServerDeps(
    parseConfig({
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_IMAGE_CONCURRENCY: "3",
    }),
    silentLogger,
  );
  try {
    expect(fixed.options.images?.concurrency).toBe(3);
  } finally {
    await fixed.close();
  }
});
