/**
 * A transform over CMS_IMAGE_TIMEOUT_SECONDS (issue 30): libvips is stopped, the answer is 503 with
 * Retry-After, nothing is stored, and the one slot (CMS_IMAGE_CONCURRENCY=1) is free again for the
 * next request. The source is large but allowed: 6000 × 4000 (24 MP) as AVIF at full size takes
 * libvips several seconds on any machine, well past the smallest time limit (1 s).
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

  it("over its time limit: 503 with Retry-After, nothing stored, and the slot is freed", async () => {
    // Flat colour at low compression: quick to make here, 24 MP for libvips to decode and encode.
    const big = await sharp({ create: { width: 6000, height: 4000, channels: 3, background: "#48c" } })
      .png({ compressionLevel: 1, adaptiveFiltering: false })
      .toBuffer();
    const made = await t.cms.create({ resourceName: "big.png", resourceMediaType: "image/png" }, big);
    const data = (query: string) => t.app.fetch(t.app.url(`${API}/getData/${made.resourceURI}?${query}`));

    const started = performance.now();
    const slow = await data("width=6000&format=avif");
    const problem = await expectProblem(slow, 503, "UNAVAILABLE");
    expect(problem.detail).toMatch(/longer than 1 s/);
    expect(Number(slow.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(performance.now() - started).toBeLessThan(15_000); // stopped, not run to its end
    const stored = await readdir(join(t.app.volume, "img"), { recursive: true }).catch(() => []);
    expect(stored.filter((name) => name.endsWith(".avif"))).toEqual([]);

    // The only slot was given back: a small transform of the same source runs at once.
    const small = await data("width=32&format=png");
    expect(small.status).toBe(200);
    expect((await sharp(Buffer.from(await small.arrayBuffer())).metadata()).width).toBe(32);
  }, 30_000);
});
