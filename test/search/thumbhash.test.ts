/**
 * Issue 38: images carry a thumbhash placeholder computed once at ingest (sharp decodes on Node and
 * Bun); other content has none. Real app, real image bytes.
 */
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { thumbHashToApproximateAspectRatio } from "thumbhash";
import { useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("thumbs", {}, { transport: "in-process" });

describe("thumbhash at ingest", () => {
  it("an image gets a short base64 placeholder of its aspect; a text file none", async () => {
    const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: "#3366cc" } })
      .png()
      .toBuffer();
    const image = (await t.cms.create({ resourceName: "wide.png", resourceMediaType: "image/png" }, png)) as {
      thumbhash?: string;
    };
    expect(image.thumbhash).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const hash = Uint8Array.from(atob(image.thumbhash as string), (c) => c.charCodeAt(0));
    expect(hash.length).toBeLessThan(40);
    expect(thumbHashToApproximateAspectRatio(hash)).toBeGreaterThan(1.5);
    const text = (await t.cms.create()) as { thumbhash?: string };
    expect(text).not.toHaveProperty("thumbhash");
    // A damaged image is stored all the same, without a placeholder.
    const broken = (await t.cms.create(
      { resourceName: "broken.png", resourceMediaType: "image/png" },
      png.subarray(0, 60),
    )) as { thumbhash?: string };
    expect(broken).not.toHaveProperty("thumbhash");
  });
});
