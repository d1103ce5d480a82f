/**
 * Derivatives are a cache (issue 30), so their writes need not wait for the disk: a first request
 * for a derivative does no fsync (which waits behind every other process's unwritten data: 495 ms
 * first requests while 800 MB of another process's writes were flushed, 117 ms without). What a
 * crash of the machine may leave of such a file (cut short, zeroed, empty) is made again by the
 * next instance, never served and never a 500. A real server on a real volume and libSQL file; the
 * crash's damage is done to the derivative's file by hand between two instances.
 */
import { readdir, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, cmsClient, type ResourceDto } from "../helpers/cms-client.js";
import { fsyncsDuring } from "../helpers/fsync-spy.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let png: ResourceDto;
const HEADER_BYTES = 83; // the fs driver's header line (fs/blob-format.ts)

beforeAll(async () => {
  app = await startTestApp({ CMS_BLOB_CACHE_BYTES: "0" });
  const bytes = await sharp({ create: { width: 96, height: 64, channels: 3, background: "#c63" } })
    .png()
    .toBuffer();
  png = await cmsClient(app, "crash").create({ resourceName: "pic.png", resourceMediaType: "image/png" }, bytes);
});
afterAll(() => app.close());

const url = (target: TestApp, query: string) => target.url(`${API}/getData/${png.resourceURI}?${query}`);
const derivativeFile = async (query: RegExp) => {
  const names = await readdir(join(app.volume, "img"), { recursive: true });
  const name = names.find((n) => query.test(n));
  if (!name) throw new Error(`no derivative file like ${query} in ${names.join(", ")}`);
  return join(app.volume, "img", name);
};

describe("the derivative cache and a crash of the machine", () => {
  /** The FileHandle syncs the blob store makes (not the database's WAL syncs) while `run` runs. */
  const storeSyncsDuring = async (run: () => Promise<unknown>) =>
    (await fsyncsDuring(app.volume, run)).filter((stack) => stack.includes("/storage/"));

  it("a first request writes its derivative without an fsync; an upload is still flushed", async () => {
    const derivative = await storeSyncsDuring(async () => {
      const res = await app.fetch(url(app, "width=20&format=webp"));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/webp");
      await res.arrayBuffer();
    });
    expect(derivative).toEqual([]);
    const upload = await storeSyncsDuring(() =>
      cmsClient(app, "crash").create({ resourceName: "t.txt", resourceMediaType: "text/plain" }, Buffer.from("x")),
    );
    expect(upload.length).toBeGreaterThan(0);
  });

  const damages: [string, (file: string) => Promise<void>][] = [
    ["cut short", (file) => truncate(file, HEADER_BYTES + 10)],
    [
      "zeroed",
      async (file) => {
        const whole = await readFile(file);
        await writeFile(file, whole.fill(0, HEADER_BYTES));
      },
    ],
    ["left empty", (file) => truncate(file, 0)],
  ];
  for (const [damage, harm] of damages) {
    it(`a derivative ${damage} by a crash is made again by the next instance: 200, the right bytes`, async () => {
      const query = `width=${30 + damages.findIndex(([d]) => d === damage)}&format=png`;
      const first = await app.fetch(url(app, query));
      expect(first.status).toBe(200);
      const made = Buffer.from(await first.arrayBuffer());
      const file = await derivativeFile(new RegExp(`w${query.match(/\d+/)![0]}-.*\\.png$`));
      await harm(file);
      // The next instance on the same volume and database (this one remembers the file as whole).
      const next = await startTestApp({
        CMS_VOLUME: app.volume,
        CMS_DATABASE_URL: app.databaseUrl,
        CMS_BLOB_CACHE_BYTES: "0",
      });
      try {
        for (let i = 0; i < 2; i++) {
          const res = await next.fetch(url(next, query));
          expect(res.status).toBe(200);
          expect(Buffer.from(await res.arrayBuffer())).toEqual(made);
        }
        expect((await readFile(file)).byteLength).toBe(HEADER_BYTES + made.byteLength); // written whole again
        expect(next.unhandledErrors()).toEqual([]);
      } finally {
        await next.close();
      }
    });
  }
});
