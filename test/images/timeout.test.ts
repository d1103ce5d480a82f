/**
 * A transform over CMS_IMAGE_TIMEOUT_SECONDS (issue 30): the answer is 503 with Retry-After at once,
 * nothing is stored, and the one slot (CMS_IMAGE_CONCURRENCY=1) stays taken until libvips really
 * stops. sharp's timeout ends libvips' pixel work, not an AVIF encode (libheif encodes after the
 * pixels are computed, with no progress calls; a 24 MP AVIF ran 12 s past a 1 s limit here), so the
 * abandoned encode runs on: were its slot given back, CPU use would exceed CMS_IMAGE_CONCURRENCY.
 * The source, 4000 × 3000 flat colour as AVIF at full size, takes libvips seconds on any machine,
 * well past the smallest time limit (1 s), and only seconds: the test waits for it to end.
 * In-process, so sharp's own counters (the same module the app loads) say when libvips has stopped.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { API, expectProblem, useCmsApp } from "../helpers/cms-client.js";

describe("image transform time limit", () => {
  const t = useCmsApp(
    "images-timeout",
    { CMS_IMAGE_TIMEOUT_SECONDS: "1", CMS_IMAGE_CONCURRENCY: "1" },
    { transport: "in-process" },
  );

  it("over its time limit: 503 with Retry-After, nothing stored; the slot is held until libvips stops", async () => {
    // Flat colour at low compression: quick to make here, 12 MP for libvips to decode and encode.
    const big = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#48c" } })
      .png({ compressionLevel: 1, adaptiveFiltering: false })
      .toBuffer();
    const made = await t.cms.create({ resourceName: "big.png", resourceMediaType: "image/png" }, big);
    const data = (query: string) => t.app.fetch(t.app.url(`${API}/getData/${made.resourceURI}?${query}`));

    const started = performance.now();
    const slow = await data("width=4000&format=avif");
    const problem = await expectProblem(slow, 503, "UNAVAILABLE");
    expect(problem.detail).toMatch(/longer than 1 s/);
    expect(Number(slow.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(15_000); // answered at the limit, not at the encode's end
    const stored = await readdir(join(t.app.volume, "img"), { recursive: true }).catch(() => []);
    expect(stored.filter((name) => name.endsWith(".avif"))).toEqual([]);

    // libvips is still encoding the abandoned AVIF: the only slot is not given to the next request,
    // which waits its time limit (1 s) and is refused like any request that finds no free slot;
    // unless libvips stops within that second (a fast machine), and only then, it gets the slot.
    expect(sharp.counters().process).toBe(1);
    let stoppedAt = Number.POSITIVE_INFINITY;
    const watch = setInterval(() => {
      if (sharp.counters().process === 0) stoppedAt = Math.min(stoppedAt, performance.now());
    }, 5);
    const meanwhile = await data("width=32&format=png").finally(() => clearInterval(watch));
    if (meanwhile.status === 200) {
      // Given the slot at the 503 (the defect), it answers while the AVIF encode still runs.
      const stopped = stoppedAt < Number.POSITIVE_INFINITY || sharp.counters().process === 0;
      expect(stopped, "the slot went to another transform while libvips still ran").toBe(true);
    } else expect((await expectProblem(meanwhile, 503, "UNAVAILABLE")).detail).toMatch(/no image transform slot/);

    // Once libvips stops, the slot is free again: a small transform of the same source runs at once.
    await expect.poll(() => sharp.counters().process, { timeout: 60_000, interval: 50 }).toBe(0);
    const small = await data("width=32&format=png");
    expect(small.status).toBe(200);
    expect((await sharp(Buffer.from(await small.arrayBuffer())).metadata()).width).toBe(32);
  }, 90_000);
});
