/**
 * Bun's getData fast path (src/runtime/bun/fast-get.ts) must give exactly the answer the app gives.
 * One real `bun src/bun.ts` process on 127.0.0.1 over a real volume and database: the same path
 * with a query string (`?via=app`) always goes to the app, so it is the reference; the access log's
 * `fastPath` field tells who answered. Small blobs come from the memory cache, a large one from its
 * file (`Bun.file().slice`). Also checks what made the entry stay on node:http before: Content-Length
 * of streamed app answers (a blob the fast path leaves to the app) and of HEAD answers.
 */
import { mkdtemp, readdir, rm, stat, truncate } from "node:fs/promises";
import { get as httpGet } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64, cmsClient } from "../helpers/cms-client.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";
import type { TestApp } from "../helpers/test-app.js";

const API = "/cms/v1.0";
// Above the cache's entry limit set below, so it is served from its file.
const LARGE = 300 * 1024;

let dir: string;
let server: ServerProcess;
const uris: Record<"small" | "large" | "changing", string> = { small: "", large: "", changing: "" };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-bun-fast-"));
  server = await spawnServer(
    {
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_BLOB_CACHE_ENTRY_BYTES: String(64 * 1024),
    },
    "bun",
  );
  const client = cmsClient({ url: (path: string) => `${server.url}${path}` } as TestApp, "bunfast");
  const large = new Uint8Array(LARGE).map((_, i) => (i * 7 + (i >> 9)) & 0xff);
  uris.small = (await client.create({ resourceName: "small.txt" }, "hello, small world")).resourceURI;
  uris.large = (
    await client.create({ resourceName: "large.bin", resourceMediaType: "application/octet-stream" }, large)
  ).resourceURI;
  // The first full read through the app fills the small-blob cache.
  await fetch(`${server.url}${API}/getData/${uris.small}?via=app`).then((res) => res.arrayBuffer());
}, 30_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Status, headers (but the per-request ones) and body bytes. */
async function answer(url: string, init: RequestInit) {
  const res = await fetch(url, init);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id"));
  return {
    status: res.status,
    headers,
    body: Buffer.from(await res.arrayBuffer()).toString("hex"),
    requestId: res.headers.get("x-request-id"),
  };
}

/** The status and head of a GET as the server sent them (node:http: no decoding, no body kept). */
function rawHead(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    }).on("error", reject);
  });
}

/** The access-log line of the request with this id. */
async function logLine(requestId: string | null) {
  for (let i = 0; i < 50; i++) {
    const line = server.stdout
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "request" && l.requestId === requestId);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no access-log line for ${requestId}`);
}

/**
 * Asks the fast path and the app; when the fast path answered, asserts the app's answer to the
 * byte (the app's own answers differ in their request ids and multipart boundaries: then the status).
 */
async function compared(which: keyof typeof uris, init: RequestInit = {}) {
  const path = `${server.url}${API}/getData/${uris[which]}`;
  const fast = await answer(path, init);
  const app = await answer(`${path}?via=app`, init);
  expect((await logLine(app.requestId)).fastPath).toBeUndefined();
  const fastPath = (await logLine(fast.requestId)).fastPath === true;
  if (fastPath) expect({ ...fast, requestId: undefined }).toEqual({ ...app, requestId: undefined });
  else expect(fast.status).toBe(app.status);
  return { ...fast, fastPath };
}

describe.each(["small", "large"] as const)("Bun fast path, %s blob: the app's answer to the byte", (which) => {
  const size = () => (which === "small" ? 18 : LARGE);

  it("full GET (200)", async () => {
    const got = await compared(which);
    expect(got).toMatchObject({ status: 200, fastPath: true });
    expect(got.headers["content-length"]).toBe(String(size()));
    expect(got.body.length).toBe(size() * 2);
  });

  it("range, open range, suffix range, and overlapping ranges coalesced into one (206)", async () => {
    for (const range of ["bytes=3-9", "bytes=5-", "bytes=-4", "bytes=2-4,3-8"]) {
      const got = await compared(which, { headers: { range } });
      expect(got, range).toMatchObject({ status: 206, fastPath: true });
    }
  });

  it("a range with a precondition that holds, or with Want-Content-Digest, as the app gives it (206)", async () => {
    for (const headers of [
      { range: "bytes=1-6", "if-none-match": '"other"' } as Record<string, string>,
      { range: "bytes=1-6", "if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT" },
      { range: "bytes=1-6", "want-content-digest": "sha-256=5" },
    ]) {
      expect(await compared(which, { headers }), JSON.stringify(headers)).toMatchObject({
        status: 206,
        fastPath: true,
      });
    }
  });

  it("If-Range: a matching ETag gives the range, another one the whole (200)", async () => {
    const etag = (await answer(`${server.url}${API}/getData/${uris[which]}`, { method: "HEAD" })).headers
      .etag as string;
    expect(await compared(which, { headers: { range: "bytes=0-1", "if-range": etag } })).toMatchObject({
      status: 206,
      fastPath: true,
    });
    expect(await compared(which, { headers: { range: "bytes=0-1", "if-range": '"other"' } })).toMatchObject({
      status: 200,
      fastPath: true,
    });
  });

  it("HEAD keeps its Content-Length and sends no body", async () => {
    const got = await compared(which, { method: "HEAD" });
    expect(got).toMatchObject({ status: 200, fastPath: true, body: "" });
    expect(got.headers["content-length"]).toBe(String(size()));
  });

  it("If-None-Match gives 304", async () => {
    const etag = (await answer(`${server.url}${API}/getData/${uris[which]}`, { method: "HEAD" })).headers
      .etag as string;
    expect(await compared(which, { headers: { "if-none-match": etag } })).toMatchObject({
      status: 304,
      fastPath: true,
      body: "",
    });
  });

  it("416 and multipart ranges are the app's", async () => {
    expect(await compared(which, { headers: { range: `bytes=${size() + 10}-` } })).toMatchObject({
      status: 416,
      fastPath: false,
    });
    const multi = await compared(which, { headers: { range: "bytes=0-1,4-5" } });
    expect(multi).toMatchObject({ status: 206, fastPath: false });
    expect(multi.headers["content-type"]).toMatch(/^multipart\/byteranges/);
  });
});

describe("Bun fast path, remembered heads of plain GETs", () => {
  it("never outlive a change of the row: rename, media type, new content", async () => {
    const client = cmsClient({ url: (path: string) => `${server.url}${path}` } as TestApp, "bunfast");
    const created = await client.create({ resourceName: "head.txt" }, "first");
    uris.changing = created.resourceURI;
    await fetch(`${server.url}${API}/getData/${created.resourceURI}?via=app`).then((res) => res.arrayBuffer()); // cached now
    const first = await compared("changing");
    expect(await compared("changing")).toMatchObject({ status: 200, fastPath: true });
    const lock = await client.lock(created.resourceUID);
    const rename = {
      ...lock,
      resourceName: "page.html",
      resourceMediaType: "text/html",
      resourceBinary: null,
      resourceExternalURI: null,
    };
    expect((await client.post("updateResource", rename)).status).toBe(200);
    const renamed = await compared("changing");
    expect(renamed).toMatchObject({ status: 200, fastPath: true });
    expect(renamed.headers["content-disposition"]).toContain('filename="page.html"');
    expect(renamed.headers["content-security-policy"]).toMatch(/^sandbox;/);
    expect((await client.post("updateResource", { ...lock, resourceBinary: base64("second version") })).status).toBe(
      200,
    );
    await fetch(`${server.url}${API}/getData/${created.resourceURI}?via=app`).then((res) => res.arrayBuffer());
    const replaced = await compared("changing");
    expect(replaced).toMatchObject({
      status: 200,
      fastPath: true,
      body: Buffer.from("second version").toString("hex"),
    });
    expect(replaced.headers.etag).not.toBe(first.headers.etag);
  });

  it("leave the fields that change an answer to the full evaluation", async () => {
    const get = await compared("small");
    const digest = await compared("small", { headers: { "want-content-digest": "sha-256=5" } });
    expect(digest).toMatchObject({ status: 200, fastPath: true });
    expect(digest.headers["content-digest"]).toBe(get.headers["repr-digest"]);
    const since = { "if-modified-since": get.headers["last-modified"] as string };
    expect(await compared("small", { headers: since })).toMatchObject({ status: 304, fastPath: true });
    expect(await compared("small", { method: "HEAD", headers: since })).toMatchObject({ status: 304, fastPath: true });
    expect(
      await compared("small", { headers: { "if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT" } }),
    ).toMatchObject({ status: 412, fastPath: false });
  });
});

describe("Bun fast path, edges", () => {
  it("an app answer streaming a blob file keeps its Content-Length (oven-sh/bun#10507)", async () => {
    // Through the app, the large blob is a Web stream read from its file: Bun.serve would send it
    // chunked; the server sends the file slice instead (runtime/bun/server.ts).
    const got = await answer(`${server.url}${API}/getData/${uris.large}?via=app`, {});
    expect(got.status).toBe(200);
    expect(got.headers["content-length"]).toBe(String(LARGE));
    expect(got.headers["transfer-encoding"]).toBeUndefined();
  });

  it("the explorer's page and assets keep their Content-Length (bytes, not a stream), gzipped or not", async () => {
    for (const [path, headers] of [
      ["/docs", {}],
      ["/vendor/swagger-ui-dist/swagger-ui-bundle.js", {}],
      ["/vendor/swagger-ui-dist/swagger-ui-bundle.js", { "accept-encoding": "gzip" }],
    ] as const) {
      // fetch would unpack the gzip and drop the length it was sent with: the head as it came, once over raw HTTP.
      const head = await rawHead(`${server.url}${path}`, headers);
      expect(head.status, path).toBe(200);
      expect(head.headers["transfer-encoding"], path).toBeUndefined();
      expect(Number(head.headers["content-length"]), path).toBeGreaterThan(1000);
    }
  });

  it("a blob file shorter than its row (a damaged volume) is never sent from the fast path", async () => {
    const size = 200 * 1024 + 1; // no other blob has this size: its file is found by it
    const client = cmsClient({ url: (path: string) => `${server.url}${path}` } as TestApp, "bunfast");
    const uri = (await client.create({ resourceName: "damaged.bin" }, new Uint8Array(size).fill(7))).resourceURI;
    const volume = join(dir, "volume");
    const files = (await readdir(volume, { recursive: true })).map((name) => join(volume, name));
    const sizes = await Promise.all(files.map(async (file) => ({ file, st: await stat(file) })));
    const blob = sizes.filter(
      ({ file, st }) => st.isFile() && st.size > size && st.size < size + 200 && !file.includes(".tmp"),
    );
    expect(blob).toHaveLength(1);
    await truncate(blob[0]!.file, blob[0]!.st.size - 1000);
    const requestId = "damaged-volume-check";
    // The app's answer to a damaged file is its own; here only who gave it matters.
    await fetch(`${server.url}${API}/getData/${uri}`, { headers: { "x-request-id": requestId } })
      .then((res) => res.arrayBuffer())
      .catch(() => undefined);
    expect((await logLine(requestId)).fastPath).toBeUndefined();
  });

  it("unknown resources and percent-encoded paths are the app's problem details", async () => {
    const res = await fetch(`${server.url}${API}/getData/${uris.small.replace(/[^/]+$/, "missing.txt")}`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect((await logLine(res.headers.get("x-request-id"))).fastPath).toBeUndefined();
    await res.arrayBuffer();
  });
});
