/**
 * The derivative cache's LRU order survives a restart (issue 30): an instance makes four
 * derivatives, two of them are used again later, the instance stops; a new one on the same volume
 * and libSQL file, with CMS_IMAGE_CACHE_BYTES shrunk to what the two used ones hold, runs a
 * collection pass: the two untouched go, the two used stay. Real server, real file, real blobs.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { API, cmsClient } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe("derivative cache eviction across a restart", () => {
  it("a restarted instance evicts the least recently used first, down to its bound", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-img-lru-"));
    dirs.push(dir);
    const shared = { CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}` };
    const time = fakeClock();
    const first = await startTestApp(shared, { clock: time.clock, transport: "in-process" });
    const cms = cmsClient(first, "lru");
    const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: "#5a5" } })
      .png()
      .toBuffer();
    const made = await cms.create({ resourceName: "src.png", resourceMediaType: "image/png" }, png);
    const get = async (app: TestApp, width: number) => {
      const res = await app.fetch(app.url(`${API}/getData/${made.resourceURI}?width=${width}&format=png`));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    const widths = [10, 20, 30, 40];
    for (const width of widths) await get(first, width);

    // Later (past the one-minute grain of recorded uses), 20 and 40 are used again.
    time.advance(5 * 60_000);
    await get(first, 20);
    await get(first, 40);
    const db = createClient({ url: shared.CMS_DATABASE_URL });
    const recorded = async () =>
      (await db.execute("select key, size, last_used_at from image_derivatives order by key")).rows.map((r) => ({
        width: Number(/w(\d+)-/.exec(String(r.key))?.[1]),
        size: Number(r.size),
        later: Number(r.last_used_at) >= time.nowMs(),
      }));
    // Uses are written off the request's path: wait until all four and both later uses are.
    await expect
      .poll(async () => (await recorded()).map((r) => [r.width, r.later]))
      .toEqual([
        [10, false],
        [20, true],
        [30, false],
        [40, true],
      ]);
    const kept = (await recorded()).filter((r) => r.later).reduce((sum, r) => sum + r.size, 0);
    await first.close();

    // The restart: a new instance on the same volume and database, its bound what 20 and 40 hold.
    const second = await startTestApp(
      { ...shared, CMS_IMAGE_CACHE_BYTES: String(kept) },
      { clock: time.clock, transport: "in-process" },
    );
    try {
      const figures = await second.deps.collector.pass();
      const left = async () =>
        (await readdir(join(shared.CMS_VOLUME, "img"), { recursive: true }))
          .map((name) => /w(\d+)-h0-inside-q0\.png$/.exec(name)?.[1])
          .filter(Boolean)
          .map(Number)
          .sort((a, b) => a - b);
      expect(await left()).toEqual([20, 40]);
      // Counted by whichever pass ran it (this one, or the one the instance starts with).
      expect(figures.derivativesEvicted === 2 || figures.derivativesEvicted === 0).toBe(true);
      expect((await recorded()).map((r) => r.width)).toEqual([20, 40]);
      // What is left is served from the store as before.
      await get(second, 40);
      expect(await left()).toEqual([20, 40]);
    } finally {
      db.close();
      await second.close();
    }
  }, 60_000);
});
