/**
 * A stored derivative's lookup is remembered in memory (issue 30: a cached derivative costs what a
 * plain getData costs), and never past the blob: an instance served over a real socket (the Node
 * fast path in front of the app) with the small-blob cache off, so every answer reads the blob's
 * file on disk; a real libSQL file. Its blob store and its derivative index (the database) are
 * counted by replacing their methods on the app's own objects with counting wrappers that call the
 * real ones. A rival instance is a second app on the same volume and database file.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANONYMOUS_PRINCIPAL } from "../../src/auth/principal.js";
import { parseUri } from "../../src/services/resource-ids.js";
import type { FsBlobStore } from "../../src/storage/drivers/fs.js";
import { API, cmsClient, type ResourceDto } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let png: ResourceDto;
const calls: string[] = [];

/** Counts every call of `names` on `target` (the real method still runs). */
function count(target: object, names: string[], label: string) {
  const methods = target as Record<string, (...args: unknown[]) => unknown>;
  for (const name of names) {
    const real = methods[name]!;
    methods[name] = (...args: unknown[]) => {
      calls.push(`${label}.${name}`);
      return real.apply(target, args);
    };
  }
}

const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
const derivativeFiles = async (volume: string) =>
  (await readdir(join(volume, "img"), { recursive: true }).catch(() => [] as string[])).filter((n) =>
    n.endsWith(".webp"),
  );

beforeAll(async () => {
  app = await startTestApp({ CMS_BLOB_CACHE_BYTES: "0" });
  count(app.deps.blobs, ["head", "get", "put", "list", "delete"], "blobs");
  // What a request may ask of the database (the collector's passes read the rest, at their own times).
  count(app.deps.store.derivatives, ["used"], "db");
  const bytes = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#c63" } })
    .png()
    .toBuffer();
  png = await cmsClient(app, "lookup").create({ resourceName: "pic.png", resourceMediaType: "image/png" }, bytes);
});
afterAll(() => app.close());

const url = (query: string, uri = png.resourceURI) => app.url(`${API}/getData/${uri}?${query}`);

describe("a stored derivative's lookup", () => {
  it("a repeat request reads neither head() nor the database, only the blob's bytes", async () => {
    const first = await app.fetch(url("width=16&format=webp"));
    expect(first.status).toBe(200);
    const made = await bytesOf(first);
    // The first use's write goes off the request's path: let it land first.
    await expect.poll(() => calls.includes("db.used")).toBe(true);
    calls.length = 0;
    for (const query of ["width=16&format=webp", "format=webp&width=16"]) {
      const again = await app.fetch(url(query));
      expect(again.status).toBe(200);
      expect(await bytesOf(again)).toEqual(made);
    }
    expect(calls).toEqual([]);
    expect(app.unhandledErrors()).toEqual([]);
  });

  it("a rival instance evicts the derivative: this one remakes it (200, the same bytes), never a 500", async () => {
    const query = "width=24&format=webp";
    const made = await bytesOf(await app.fetch(url(query)));
    expect((await app.fetch(url(query))).status).toBe(200); // remembered now
    const rival = await startTestApp(
      { CMS_VOLUME: app.volume, CMS_DATABASE_URL: app.databaseUrl, CMS_IMAGE_CACHE_BYTES: "0" },
      { transport: "in-process" },
    );
    try {
      await rival.deps.collector.pass(); // a bound of 0: every derivative goes (if its start-up pass left any)
      expect(await derivativeFiles(app.volume)).toEqual([]);
    } finally {
      await rival.close();
    }
    const answers = async () => {
      const res = await app.fetch(url(query));
      expect(res.status).toBe(200);
      expect(await bytesOf(res)).toEqual(made);
    };
    // At once: the file this instance holds open (its pool, fs.ts openFile) still reads the same bytes.
    await answers();
    // Once the pool lets the file go, a read finds it gone: the app makes it again, then it is remembered again.
    await expect.poll(() => (app.deps.blobs as FsBlobStore).openFileStats().pooled, { timeout: 10_000 }).toBe(0);
    calls.length = 0;
    for (let i = 0; i < 3; i++) await answers();
    expect(calls.filter((c) => c === "blobs.put")).toHaveLength(1);
    expect(calls.filter((c) => c === "blobs.head")).toHaveLength(1); // the app's, before it made it
    expect(await derivativeFiles(app.volume)).toHaveLength(1);
    expect(app.unhandledErrors()).toEqual([]);
  });

  it("purging the source forgets its derivatives here: the same bytes again are a new, unmade derivative", async () => {
    const cms = cmsClient(app, "lookup");
    const bytes = await sharp({ create: { width: 40, height: 40, channels: 3, background: "#39c" } })
      .png()
      .toBuffer();
    const doomed = await cms.create({ resourceName: "doomed.png", resourceMediaType: "image/png" }, bytes);
    const query = "width=10&format=webp";
    expect((await app.fetch(url(query, doomed.resourceURI))).status).toBe(200);
    expect((await app.fetch(url(query, doomed.resourceURI))).status).toBe(200); // remembered now
    expect((await cms.post("purgeResource", { resourceUID: doomed.resourceUID })).status).toBe(200);
    expect((await app.fetch(url(query, doomed.resourceURI))).status).toBe(404);
    // The same bytes again: the same source blob, so the same derivative key, whose blob the purge deleted.
    const again = await cms.create({ resourceName: "again.png", resourceMediaType: "image/png" }, bytes);
    const { context, path } = parseUri(again.resourceURI)!;
    const row = await app.services.resources.findByUri(context, path, ANONYMOUS_PRINCIPAL);
    const request = app.services.images.requested((name) => ({ width: "10", format: "webp" })[name]);
    expect(await app.services.images.stored(row, request!, "")).toBeNull();
    const res = await app.fetch(url(query, again.resourceURI));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(app.unhandledErrors()).toEqual([]);
  });
});
