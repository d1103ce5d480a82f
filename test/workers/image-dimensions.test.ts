/**
 * Resource JSON's `width` and `height` on the Worker (issue 30) inside workerd: read from the
 * header at ingest by the runtime-free reader (no sharp there), stored in D1, absent for text.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { binaryCreate } from "../helpers/binary-create.js";

beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

const create = async (name: string, mediaType: string, binary: string) => {
  const res = await exports.default.fetch(
    binaryCreate("http://worker.test/cms/v1.0", { binary, mediaType, name, tenant: "t" }),
  );
  expect(res.status).toBe(201);
  return (await res.json()) as { resourceUID: string; width?: number; height?: number };
};

describe("image width and height on Workers", () => {
  it("are read at ingest, stored and queried; a text has none", async () => {
    // A 1×1 PNG and a 3×2 GIF.
    const png = await create(
      "dot.png",
      "image/png",
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
    );
    expect([png.width, png.height]).toEqual([1, 1]);
    const gif = await create("g.gif", "image/gif", "R0lGODlhAwACAIAAAP///wAAACwAAAAAAwACAAACAoRRADs=");
    expect([gif.width, gif.height]).toEqual([3, 2]);
    const queried = await exports.default.fetch(
      new Request("http://worker.test/cms/v1.0/queryResource", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ queryUID: gif.resourceUID }),
      }),
    );
    expect(await queried.json()).toMatchObject({ width: 3, height: 2 });
    const text = await create("a.txt", "text/plain", btoa("hello"));
    expect(text).not.toHaveProperty("width");
  });
});
