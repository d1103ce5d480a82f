/**
 * The same derivatives (and ingest-time width and height) on Bun: `src/bun.ts` spawned on 127.0.0.1 (port 0) with its own volume and
 * libSQL file; sharp loads under Bun's N-API, and Bun's file-sending path serves the stored derivative
 * (the small-blob cache is off, so every answer is read from its file). A rival instance is an app in
 * this process on the same volume and database file.
 */
import { mkdtemp, readdir, rm, truncate } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import { startTestApp } from "../helpers/test-app.js";
import { libvipsLoaded } from "./libvips-loaded.js";

let dir: string;
let server: ServerProcess;
/** `bun src/bun.ts` on this file's volume and database (a second call: another process on the same ones). */
const spawnBun = () =>
  spawnServer(
    {
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_PORT: "0",
      CMS_BLOB_CACHE_BYTES: "0",
    },
    "bun",
  );
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-images-bun-"));
  server = await spawnBun();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A PNG of one colour stored through the Bun server. */
async function storePng(name: string, width: number, height: number, background: string) {
  const cms = cmsClient({ url: (path) => new URL(path, server.url).href }, "bun-images");
  const png = await sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
  return { cms, made: await cms.create({ resourceName: name, resourceMediaType: "image/png" }, png) };
}

describe("image derivatives on Bun", () => {
  it("loads libvips soon after listening, before any image request", async () => {
    await expect.poll(() => libvipsLoaded(server.child.pid), { timeout: 10_000, interval: 50 }).toBe(true);
  });

  it("resizes to WebP, answers a repeat from the stored derivative, refuses SVG", async () => {
    const { cms, made } = await storePng("wide.png", 80, 40, "#48c");
    expect(made).toMatchObject({ width: 80, height: 40 }); // read from the header at ingest
    const url = new URL(`${API}/getData/${made.resourceURI}?width=20&format=webp`, server.url);
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/webp");
    const bytes = Buffer.from(await first.arrayBuffer());
    expect(first.headers.get("content-length")).toBe(String(bytes.length));
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["webp", 20, 10]);
    const again = await fetch(url);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(Buffer.from(await again.arrayBuffer())).toEqual(bytes);
    const svg = await cms.create(
      { resourceName: "x.svg", resourceMediaType: "image/svg+xml" },
      '<svg xmlns="http://www.w3.org/2000/svg"/>',
    );
    await expectProblem(
      await fetch(new URL(`${API}/getData/${svg.resourceURI}?width=5`, server.url)),
      422,
      "NOT_TRANSFORMABLE",
    );

    // A rival instance evicts every derivative (a bound of 0): the derivative Bun remembers as
    // stored is gone from the volume. Bun answers a vanished file with an error, so its fast path
    // must notice and leave it to the app, which makes it again: 200, the same bytes.
    const rival = await startTestApp(
      { CMS_VOLUME: join(dir, "volume"), CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`, CMS_IMAGE_CACHE_BYTES: "0" },
      { transport: "in-process" },
    );
    try {
      await rival.deps.collector.pass();
      const left = await readdir(join(dir, "volume", "img"), { recursive: true }).catch(() => []); // emptied folders go too
      expect(left.filter((name) => name.endsWith(".webp"))).toEqual([]);
    } finally {
      await rival.close();
    }
    for (let i = 0; i < 2; i++) {
      const remade = await fetch(url);
      expect(remade.status).toBe(200);
      expect(Buffer.from(await remade.arrayBuffer())).toEqual(bytes);
    }
  });

  it("a derivative file a crash of the machine left empty is made again by the next Bun process", async () => {
    const { made } = await storePng("crash.png", 60, 30, "#c84");
    const path = `${API}/getData/${made.resourceURI}?width=12&format=png`;
    const first = await fetch(new URL(path, server.url));
    expect(first.status).toBe(200);
    const bytes = Buffer.from(await first.arrayBuffer());
    const names = await readdir(join(dir, "volume", "img"), { recursive: true });
    const file = names.find((name) => /w12-.*\.png$/.test(name));
    expect(file).toBeDefined();
    // Written without an fsync (a cache's write): a crash may leave the renamed file empty.
    await truncate(join(dir, "volume", "img", file!), 0);
    const next = await spawnBun();
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(new URL(path, next.url));
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
      }
    } finally {
      await next.stop();
    }
  }, 60_000);
});
