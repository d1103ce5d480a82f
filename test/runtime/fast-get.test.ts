/**
 * The getData fast path (src/runtime/node/fast-get.ts) must give exactly the answer the Hono route
 * gives, and hand everything else to the app. Two real servers over the same deps on 127.0.0.1:
 * one with the fast path (its fallback to the app counted, to know who answered), one with the app alone.
 */
import { readdirSync, readlinkSync } from "node:fs";
import { createServer, type IncomingMessage, request, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promiseHooks } from "node:v8";
import { getRequestListener } from "@hono/node-server";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app.js";
import type { MetadataStore } from "../../src/metadata/metadata-store.js";
import { bunFastGet } from "../../src/runtime/bun/fast-get.js";
import { withFastGet } from "../../src/runtime/node/fast-get.js";
import { createServices } from "../../src/services/index.js";
import type { CachedBlobStore } from "../../src/storage/drivers/cached.js";
import type { FsBlobStore } from "../../src/storage/drivers/fs.js";
import { base64, cmsClient } from "../helpers/cms-client.js";
import { getWithHost } from "../helpers/host-request.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
let servers: Servers;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

type Servers = Awaited<ReturnType<typeof serversFor>>;

/** `target`'s app behind two servers: one with the fast path (its hand-offs to the app counted), one without. */
async function serversFor(target: TestApp) {
  const listener = getRequestListener(target.app.fetch);
  const counted: RequestListener = (req, res) => {
    result.fallbacks++;
    listener(req, res);
  };
  const fast = createServer(
    withFastGet({ services: target.services, logger: target.deps.logger, anonymousRead: true }, counted),
  );
  const plain = createServer(listener);
  const result = {
    fastUrl: await listen(fast),
    plainUrl: await listen(plain),
    /** Requests the fast path handed to the app. */
    fallbacks: 0,
    async close() {
      for (const server of [fast, plain]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
  return result;
}

beforeAll(async () => {
  app = await startTestApp();
  servers = await serversFor(app);
});
afterAll(async () => {
  await servers.close();
  await app.close();
});

const create = async (name: string, content: string) =>
  (await cmsClient(app, "fast").create({ resourceName: name }, content)).resourceURI;

/** Status, headers (but the per-request ones) and body (byte for byte, as latin1). */
async function answer(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id"));
  const body = Buffer.from(await res.arrayBuffer()).toString("latin1");
  return { status: res.status, headers, body, requestId: res.headers.get("x-request-id") };
}

/** Asks the fast server, then the app alone; returns the fast answer and who gave it. */
async function decided(path: string, init: RequestInit = {}) {
  const before = servers.fallbacks;
  const got = await answer(servers.fastUrl, path, init);
  const answeredFast = servers.fallbacks === before;
  const reference = await answer(servers.plainUrl, path, init);
  // Answered here, it must be the app's answer to the byte; otherwise the app gave it anyway.
  if (answeredFast) expect({ ...got, requestId: undefined }).toEqual({ ...reference, requestId: undefined });
  else expect(got.status).toBe(reference.status);
  return { ...got, answeredFast };
}

describe("getData fast path", () => {
  let uri: string;
  const content = "0123456789abcdefghij";
  beforeAll(async () => {
    uri = await create("hot.txt", content);
  });

  it("answers a blob that is not in memory from its file, and warms the memory cache", async () => {
    const cache = app.deps.blobs as CachedBlobStore;
    cache.clear();
    expect(await decided(`/cms/v1.0/getData/${uri}`)).toMatchObject({ status: 200, body: content, answeredFast: true });
    await cache.idle(); // the fill the file read started
    expect(cache.stats().entries).toBe(1);
  });

  it("answers a cached blob itself, exactly as the app does (GET, HEAD, one range, 304)", async () => {
    const get = await decided(`/cms/v1.0/getData/${uri}`);
    expect(get).toMatchObject({ status: 200, body: content, answeredFast: true });
    expect(get.headers).toMatchObject({
      "content-length": "20",
      "access-control-allow-origin": "*",
      etag: expect.stringMatching(/^"[0-9a-f]{64}"$/),
    });

    expect(await decided(`/cms/v1.0/getData/${uri}`, { method: "HEAD" })).toMatchObject({
      status: 200,
      body: "",
      answeredFast: true,
    });
    expect(await decided(`/cms/v1.0/getData/${uri}`, { headers: { range: "bytes=2-5" } })).toMatchObject({
      status: 206,
      body: "2345",
      answeredFast: true,
    });
    expect(
      await decided(`/cms/v1.0/getData/${uri}`, { headers: { "if-none-match": get.headers.etag as string } }),
    ).toMatchObject({
      status: 304,
      body: "",
      answeredFast: true,
    });
  });

  it("remembers a plain GET's head per row but never past a change: rename, media type, new content", async () => {
    const client = cmsClient(app, "fast");
    const created = await client.create({ resourceName: "head.txt" }, "first");
    const path = `/cms/v1.0/getData/${created.resourceURI}`;
    const first = await decided(path); // its head is remembered from here on (and the blob cached)
    expect(await decided(path)).toMatchObject({ status: 200, body: "first", answeredFast: true });
    const lock = await client.lock(created.resourceUID);
    const rename = {
      ...lock,
      resourceName: "page.html",
      resourceMediaType: "text/html",
      resourceBinary: null,
      resourceExternalURI: null,
    };
    expect((await client.post("updateResource", rename)).status).toBe(200);
    // decided() holds each fast answer to the app's, byte for byte.
    const renamed = await decided(path);
    expect(renamed).toMatchObject({ status: 200, body: "first", answeredFast: true });
    expect(renamed.headers["content-disposition"]).toContain('filename="page.html"');
    expect(renamed.headers["content-security-policy"]).toMatch(/^sandbox;/);
    expect((await client.post("updateResource", { ...lock, resourceBinary: base64("second version") })).status).toBe(
      200,
    );
    await decided(path);
    const replaced = await decided(path);
    expect(replaced).toMatchObject({ status: 200, body: "second version", answeredFast: true });
    expect(replaced.headers.etag).not.toBe(first.headers.etag);
  });

  it("answers the fields that change an answer by themselves once a plain GET's head is remembered", async () => {
    const path = `/cms/v1.0/getData/${uri}`;
    const get = await decided(path);
    const digest = await decided(path, { headers: { "want-content-digest": "sha-256=5" } });
    expect(digest).toMatchObject({ status: 200, answeredFast: true });
    expect(digest.headers["content-digest"]).toBe(get.headers["repr-digest"]);
    expect(
      await decided(path, { headers: { "if-modified-since": get.headers["last-modified"] as string } }),
    ).toMatchObject({ status: 304, answeredFast: true });
    expect(await decided(path, { headers: { "if-match": get.headers.etag as string } })).toMatchObject({
      status: 200,
      answeredFast: true,
    });
    expect(await decided(path, { headers: { "if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT" } })).toMatchObject({
      status: 412,
      answeredFast: false,
    });
    expect(
      await decided(path, { method: "HEAD", headers: { "if-none-match": get.headers.etag as string } }),
    ).toMatchObject({ status: 304, answeredFast: true });
    expect(
      await decided(path, { headers: { range: "bytes=-3", "if-range": get.headers.etag as string } }),
    ).toMatchObject({ status: 206, body: "hij", answeredFast: true });
  });

  it("sends stored HTML with the same sandbox policy as the app", async () => {
    const page = (
      await cmsClient(app, "fast").create(
        { resourceName: "page.html", resourceMediaType: "text/html" },
        "<script>1</script>",
      )
    ).resourceURI;
    await decided(`/cms/v1.0/getData/${page}`); // cached by now
    const got = await decided(`/cms/v1.0/getData/${page}`);
    expect(got).toMatchObject({ status: 200, answeredFast: true });
    expect(got.headers["content-security-policy"]).toMatch(/^sandbox;/);
  });

  it("keeps the request id (the access line is written around it, test/runtime/access-log.test.ts)", async () => {
    const before = servers.fallbacks;
    const res = await fetch(`${servers.fastUrl}/cms/v1.0/getData/${uri}`, {
      headers: { "x-request-id": "fast-trace-1" },
    });
    expect(res.headers.get("x-request-id")).toBe("fast-trace-1");
    await res.text();
    expect(servers.fallbacks).toBe(before);
  });

  it.each([
    ["several ranges (multipart)", "", { range: "bytes=0-1,4-5" }, 206],
    ["an unsatisfiable range", "", { range: "bytes=500-" }, 416],
    ["a failed If-Match", "", { "if-match": '"other"' }, 412],
    ["a query string (signed links live there)", "?expires=1", {}, 403],
  ])("leaves %s to the app", async (_what, suffix, headers, status) => {
    const result = await decided(`/cms/v1.0/getData/${uri}${suffix}`, { headers });
    expect(result.status).toBe(status);
    expect(result.answeredFast).toBe(false);
  });

  it("leaves unknown, encoded and malformed paths to the app", async () => {
    for (const path of [
      `/cms/v1.0/getData/${uri}x`,
      `/cms/v1.0/getData/${uri.replace("/", "%2F")}`,
      "/cms/v1.0/getData/only-a-context",
    ]) {
      const result = await decided(path);
      expect(result.status).toBe(404);
      expect(result.answeredFast).toBe(false);
    }
  });

  it("stops serving a deleted resource at once, though its blob is still cached", async () => {
    const doomed = await create("doomed.txt", "soon gone");
    await decided(`/cms/v1.0/getData/${doomed}`); // cached by now
    expect((await decided(`/cms/v1.0/getData/${doomed}`)).answeredFast).toBe(true);
    const client = cmsClient(app, "fast");
    const lock = await client.lock(doomed.split("/")[0] as string);
    expect((await client.post("deleteResource", lock)).status).toBe(200);
    const after = await decided(`/cms/v1.0/getData/${doomed}`);
    expect(after).toMatchObject({ status: 404, answeredFast: false });
  });

  it("answers nothing when reads need credentials", async () => {
    let handedOn = 0;
    const guarded = createServer(
      withFastGet({ services: app.services, logger: app.deps.logger, anonymousRead: false }, (_req, res) => {
        handedOn++;
        res.writeHead(418).end();
      }),
    );
    const url = await listen(guarded);
    try {
      expect((await fetch(`${url}/cms/v1.0/getData/${uri}`)).status).toBe(418);
      expect(handedOn).toBe(1);
    } finally {
      guarded.closeAllConnections();
      await new Promise((resolve) => guarded.close(resolve));
    }
  });
});

describe("signed links on the fast path, reads needing credentials (delivery/signed-read.ts)", () => {
  const content = "a signed read";
  let uri: string;
  let signedFast: Server;
  let fastUrl: string;
  let handedOn = 0;
  // Over a year: the Cache-Control is capped at a year, so the fast and the app's answers agree whatever the second.
  const expires = () => Math.floor(Date.now() / 1000) + 2 * 365 * 86_400;
  const link = async (path: string, version?: string) => {
    const target = version ? `${path}?v=${version}` : path;
    const query = await app.deps.links.sign(target, expires());
    return `${target}${version ? "&" : "?"}${query}`;
  };
  beforeAll(async () => {
    uri = await create("signed.txt", content);
    const listener = getRequestListener(app.app.fetch);
    signedFast = createServer(
      withFastGet(
        {
          services: app.services,
          logger: app.deps.logger,
          anonymousRead: false,
          signedLinks: { links: app.deps.links, clock: app.deps.clock },
        },
        (req, res) => {
          handedOn++;
          listener(req, res);
        },
      ),
    );
    fastUrl = await listen(signedFast);
  });
  afterAll(async () => {
    signedFast.closeAllConnections();
    await new Promise((resolve) => signedFast.close(resolve));
  });

  /** The fast server's answer and whether it handed the request on; the app's answer must be the same to the byte. */
  async function signed(path: string, init: RequestInit = {}) {
    const before = handedOn;
    const got = await answer(fastUrl, path, init);
    const reference = await answer(servers.plainUrl, path, init);
    expect({ ...got, requestId: undefined }).toEqual({ ...reference, requestId: undefined });
    return { ...got, answeredFast: handedOn === before };
  }

  it("answers a valid link itself, exactly as the app does (GET, HEAD, one range, 304), under the link's Cache-Control", async () => {
    const path = await link(`/cms/v1.0/getData/${uri}`);
    await signed(path); // the first read fills the small-blob cache
    const get = await signed(path);
    expect(get).toMatchObject({ status: 200, body: content, answeredFast: true });
    expect(get.headers["cache-control"]).toBe("private, max-age=31536000");
    expect(await signed(path, { method: "HEAD" })).toMatchObject({ status: 200, body: "", answeredFast: true });
    expect(await signed(path, { headers: { range: "bytes=2-7" } })).toMatchObject({
      status: 206,
      body: "signed",
      answeredFast: true,
    });
    const etag = get.headers.etag as string;
    expect(await signed(path, { headers: { "if-none-match": etag } })).toMatchObject({
      status: 304,
      answeredFast: true,
    });
  });

  it("answers a versioned link with the link's Cache-Control, not the immutable one", async () => {
    // The versioned URL's `v`: the content's SHA-256 (its strong ETag), the first 16 digits.
    const etag = (await answer(servers.plainUrl, `/cms/v1.0/getData/${uri}`)).headers.etag as string;
    const version = etag.slice(1, 17);
    const path = await link(`/cms/v1.0/getData/${uri}`, version);
    const got = await signed(path);
    expect(got).toMatchObject({ status: 200, body: content, answeredFast: true });
    expect(got.headers["cache-control"]).toBe("private, max-age=31536000");
  });

  it("hands the app every request it must judge: its guard refuses a bad link, and no link needs a token", async () => {
    const path = await link(`/cms/v1.0/getData/${uri}`);
    const [bare, query] = path.split("?") as [string, string];
    const tampered = path.replace(/signature=(.)/, (_m, c: string) => `signature=${c === "A" ? "B" : "A"}`);
    const other = await create("other.txt", "another resource");
    for (const [what, target, status] of [
      ["a changed signature", tampered, 403],
      ["another resource's path", `/cms/v1.0/getData/${other}?${query}`, 403],
      ["an image parameter beside the link", `${path}&width=8`, 403],
      ["no link (auth is off in this app: it answers)", bare, 200],
    ] as const) {
      const before = handedOn;
      const got = await answer(fastUrl, target);
      expect(handedOn - before, what).toBe(1);
      expect(got.status, what).toBe(status);
    }
  });

  it("Bun's fast path answers the same link itself, and leaves a bad one to the app", async () => {
    const fast = bunFastGet({
      services: app.services,
      anonymousRead: false,
      signedLinks: { links: app.deps.links, clock: app.deps.clock },
      cachedUpTo: 64 * 1024,
    });
    const path = await link(`/cms/v1.0/getData/${uri}`);
    const res = fast(new Request(`http://127.0.0.1${path}`), "req-signed");
    expect(res).toBeInstanceOf(Response);
    expect(await (res as Response).text()).toBe(content);
    expect((res as Response).headers.get("cache-control")).toBe("private, max-age=31536000");
    const tampered = path.replace(/signature=(.)/, (_m, c: string) => `signature=${c === "A" ? "B" : "A"}`);
    expect(fast(new Request(`http://127.0.0.1${tampered}`), "req-bad")).toBeNull();
    expect(fast(new Request(`http://127.0.0.1/cms/v1.0/getData/${uri}`), "req-unsigned")).toBeNull();
  });
});

describe("getData fast path with CMS_CONTENT_ORIGIN", () => {
  let split: TestApp;
  let splitServers: Servers;
  beforeAll(async () => {
    split = await startTestApp({ CMS_CONTENT_ORIGIN: "http://content.localhost" });
    splitServers = await serversFor(split);
  });
  afterAll(async () => {
    await splitServers.close();
    await split.close();
  });

  it("decides by the request's host exactly as the app does", async () => {
    const page = (
      await cmsClient(split, "split").create({ resourceName: "p.html", resourceMediaType: "text/html" }, "<b>x</b>")
    ).resourceURI;
    const path = `/cms/v1.0/getData/${page}`;
    await getWithHost(`${splitServers.plainUrl}${path}`, "127.0.0.1"); // cached by now
    // Spelled as clients may: the default port and any case name the same origin.
    const hosts = [
      ["content.localhost", /^inline/],
      ["content.localhost:80", /^inline/],
      ["Content.LocalHost", /^inline/],
      ["content.localhost:8080", /^attachment/],
      ["127.0.0.1", /^attachment/],
    ] as const;
    for (const [host, disposition] of hosts) {
      const before = splitServers.fallbacks;
      const fastAnswer = await getWithHost(`${splitServers.fastUrl}${path}`, host);
      expect(splitServers.fallbacks).toBe(before); // answered by the fast path
      expect(fastAnswer, host).toEqual(await getWithHost(`${splitServers.plainUrl}${path}`, host));
      expect(fastAnswer.headers["content-disposition"], host).toMatch(disposition);
    }
  });
});

describe("getData fast path from blob files (not in memory)", () => {
  // Larger than the cache's entry limit (64 KiB) and than one read (512 KiB): always read from its file.
  const size = 1536 * 1024 + 123;
  const content = Buffer.alloc(size);
  for (let i = 0; i < size; i++) content[i] = (i * 7919 + (i >> 9)) & 0xff;
  const text = content.toString("latin1");
  let path: string;
  let etag: string;
  let origin: Origin;
  beforeAll(async () => {
    origin = await startOrigin();
    path = `/cms/v1.0/getData/${(await cmsClient(app, "fast").create({ resourceName: "video.bin" }, content)).resourceURI}`;
    etag = (await decided(path)).headers.etag as string;
  });
  afterAll(() => origin.close());

  /** getData's path of a resource of `size` generated bytes, ingested from the origin (no request body limit). */
  const fromOrigin = async (name: string, size: number) =>
    `/cms/v1.0/getData/${(await cmsClient(app, "fast").create({ resourceName: name, resourceBinary: undefined, resourceExternalURI: origin.url(`/gen/${size}`) })).resourceURI}`;

  it.each([
    ["a whole GET", {}, 200, text],
    ["one range across reads", { range: "bytes=100-700000" }, 206, text.slice(100, 700001)],
    ["a 64 KiB range", { range: "bytes=1000000-1065535" }, 206, text.slice(1000000, 1065536)],
    ["a suffix range", { range: "bytes=-1000" }, 206, text.slice(-1000)],
    ["an open range", { range: "bytes=1500000-" }, 206, text.slice(1500000)],
    ["a range past the end, clipped", { range: "bytes=1572000-9999999" }, 206, text.slice(1572000)],
    ["two overlapping ranges, coalesced into one", { range: "bytes=100-199,150-299" }, 206, text.slice(100, 300)],
    [
      "a range with a precondition that holds",
      { range: "bytes=10-19", "if-none-match": '"other"' },
      206,
      text.slice(10, 20),
    ],
    [
      "a range with Want-Content-Digest",
      { range: "bytes=10-19", "want-content-digest": "sha-256=5" },
      206,
      text.slice(10, 20),
    ],
  ])("answers %s itself, exactly as the app does", async (_what, headers, status, body) => {
    const got = await decided(path, { headers });
    expect(got).toMatchObject({ status, answeredFast: true });
    expect(got.body === body).toBe(true); // not toEqual: a mismatch would print megabytes
  });

  it("gives each of many concurrent GETs of one file its own request id (the head is shared per row)", async () => {
    // Each request waits for its file between deciding its head and writing it, and a file not yet
    // open makes them all wait together: the others decide their heads in between.
    const fresh = await fromOrigin("race.bin", 256 * 1024);
    const before = servers.fallbacks;
    const ids = Array.from({ length: 24 }, (_, n) => `race-${n}`);
    const echoed = await Promise.all(
      ids.map(async (id) => {
        const res = await fetch(`${servers.fastUrl}${fresh}`, { headers: { "x-request-id": id } });
        await res.arrayBuffer();
        return res.headers.get("x-request-id");
      }),
    );
    expect(servers.fallbacks).toBe(before); // answered by the fast path, from the file
    expect(echoed).toEqual(ids);
  });

  it("answers HEAD, 304 and If-Range (match: the range; mismatch: the whole) itself", async () => {
    expect(await decided(path, { method: "HEAD" })).toMatchObject({ status: 200, body: "", answeredFast: true });
    expect(await decided(path, { headers: { "if-none-match": etag } })).toMatchObject({
      status: 304,
      body: "",
      answeredFast: true,
    });
    const matched = await decided(path, { headers: { range: "bytes=5-9", "if-range": etag } });
    expect(matched).toMatchObject({ status: 206, body: text.slice(5, 10), answeredFast: true });
    const mismatched = await decided(path, { headers: { range: "bytes=5-9", "if-range": '"other"' } });
    expect(mismatched).toMatchObject({ status: 200, answeredFast: true });
    expect(mismatched.body.length).toBe(size);
  });

  it.each([
    ["several ranges (multipart)", { range: "bytes=0-1,1000000-1000001" }, 206],
    ["an unsatisfiable range", { range: `bytes=${size}-` }, 416],
  ])("leaves %s to the app", async (_what, headers, status) => {
    expect(await decided(path, { headers })).toMatchObject({ status, answeredFast: false });
  });

  it("answers a zero-byte blob (GET, HEAD) itself, and leaves its ranges to the app (416)", async () => {
    const empty = await fromOrigin("empty.bin", 0);
    (app.deps.blobs as CachedBlobStore).clear();
    expect(await decided(empty)).toMatchObject({ status: 200, body: "", answeredFast: true });
    expect(await decided(empty, { method: "HEAD" })).toMatchObject({ status: 200, body: "", answeredFast: true });
    expect(await decided(empty, { headers: { range: "bytes=0-" } })).toMatchObject({
      status: 416,
      answeredFast: false,
    });
  });

  it("gives the file back when a client goes away mid-body, and stays paused while the client does not read", async () => {
    const fsStore = (app.deps.blobs as CachedBlobStore).inner as FsBlobStore;
    const bigPath = await fromOrigin("big.bin", 48 * 1024 * 1024); // more than loopback's socket buffers hold
    // Descriptors open on the volume's files: the process's other descriptors (sockets, the
    // database, vitest's own) come and go with the rest of the run and made a plain count flaky.
    const openFds = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(app.volume);
        } catch {
          return false; // closed since it was listed
        }
      }).length;
    await decided(bigPath); // the fast answer is the app's, byte for byte
    // Pools its file again just before counting: reading 48 MiB twice above can take longer than
    // the pool keeps an idle file under load (it failed so in a loaded full run).
    await answer(servers.fastUrl, bigPath, { headers: { range: "bytes=0-0" } });
    const fdsBefore = openFds();
    expect(fdsBefore).toBeGreaterThan(0); // the pooled file is counted: the check below can fail
    expect(fsStore.openFileStats().readers).toBe(0);

    const before = servers.fallbacks;
    const req = request(`${servers.fastUrl}${bigPath}`);
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      req.on("response", resolve).on("error", reject).end(),
    );
    expect(res.statusCode).toBe(200);
    res.pause(); // read nothing: the server must wait for 'drain', holding the file
    await expect.poll(() => fsStore.openFileStats().readers).toBe(1); // held while the client reads nothing
    req.destroy();
    await expect.poll(() => fsStore.openFileStats().readers).toBe(0);
    expect(servers.fallbacks).toBe(before);
    await expect.poll(openFds).toBeLessThanOrEqual(fdsBefore);
    expect(app.unhandledErrors()).toEqual([]);
  });
});

/**
 * A Node server running the fast path before the app, recording for each request whether its head
 * was sent before the request listener returned (answered in the request's own call), and how many
 * promises the listener made in that call.
 */
async function inCallServer() {
  const sentInCall: boolean[] = [];
  const promisesInCall: number[] = [];
  const fast = withFastGet(
    { services: app.services, logger: app.deps.logger, anonymousRead: true },
    getRequestListener(app.app.fetch),
  );
  const server = createServer((req, res) => {
    let promises = 0;
    const stop = promiseHooks.onInit(() => promises++);
    try {
      fast(req, res);
    } finally {
      stop();
    }
    sentInCall.push(res.headersSent);
    promisesInCall.push(promises);
  });
  const url = await listen(server);
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url, sentInCall, promisesInCall, close };
}

describe("a cached row and blob are answered in the request's own call (no promise in between)", () => {
  let path: string;
  beforeAll(async () => {
    path = `/cms/v1.0/getData/${await create("sync.txt", "answered at once")}`;
    await answer(servers.plainUrl, path); // the app's read fills the row and blob caches
  });

  it("Node: the head is sent before the request listener returns; a blob not in memory waits for its file", async () => {
    const { url, sentInCall, close } = await inCallServer();
    try {
      expect(await answer(url, path)).toMatchObject({ status: 200, body: "answered at once" });
      (app.deps.blobs as CachedBlobStore).clear();
      expect(await answer(url, path)).toMatchObject({ status: 200, body: "answered at once" });
      expect(sentInCall).toEqual([true, false]);
    } finally {
      await close();
    }
  });

  it("Node: a cached blob's answer makes no promise (GET and HEAD); one not in memory does", async () => {
    const { url, promisesInCall, close } = await inCallServer();
    try {
      await answer(servers.plainUrl, path); // cached again after the test above cleared it
      expect(await answer(url, path)).toMatchObject({ status: 200, body: "answered at once" });
      expect(await answer(url, path, { method: "HEAD" })).toMatchObject({ status: 200 });
      (app.deps.blobs as CachedBlobStore).clear();
      expect(await answer(url, path)).toMatchObject({ status: 200, body: "answered at once" });
      // An async function and its `.catch` were two promises on every request (bench/NOTES.md, eighth pass).
      expect(promisesInCall.slice(0, 2)).toEqual([0, 0]);
      expect(promisesInCall[2]).toBeGreaterThan(0); // waits for its file
    } finally {
      await close();
    }
  });

  it("Bun: the handler returns the Response itself, not a promise of it", async () => {
    const fast = bunFastGet({ services: app.services, anonymousRead: true, cachedUpTo: 64 * 1024 });
    await answer(servers.plainUrl, path); // cached again after the test above cleared it
    const res = fast(new Request(`http://127.0.0.1${path}`), "req-1");
    expect(res).toBeInstanceOf(Response);
    expect(await (res as Response).text()).toBe("answered at once");
    expect((res as Response).headers.get("x-request-id")).toBe("req-1");
    // A URI that is not there: null in the same call too (the app answers the 404).
    expect(fast(new Request("http://127.0.0.1/cms/v1.0/getData/nope-t/x.txt"), "req-2")).toBeNull();
  });
});

describe("getData fast path on S3 (no local files): a blob over the cache's entry limit", () => {
  // Larger than CMS_BLOB_CACHE_ENTRY_BYTES (64 KiB): never in memory, never a local file, so the app serves it.
  const content = Buffer.alloc(100 * 1024, "s3");
  let s3: S3TestServer;
  let target: TestApp;
  let services: ReturnType<typeof createServices>;
  let counted: TestApp["app"];
  let lookups = 0;
  let fastUrl: string;
  let close: () => Promise<void>;
  let path: string;
  beforeAll(async () => {
    s3 = await startS3Server();
    target = await startTestApp(s3Settings(s3));
    // The real store, its getData lookups counted (both forms: the prepared synchronous one and the promise).
    const { store } = target.deps;
    const { findByUriNow } = store;
    const countingStore: MetadataStore = {
      ...store,
      findByUri: (context, p) => (lookups++, store.findByUri(context, p)),
      ...(findByUriNow && { findByUriNow: (context: string, p: string) => (lookups++, findByUriNow(context, p)) }),
    };
    const deps = { ...target.deps, store: countingStore };
    services = createServices(deps);
    counted = createApp(deps, services);
    const server = createServer(
      withFastGet({ services, logger: deps.logger, anonymousRead: true }, getRequestListener(counted.fetch)),
    );
    fastUrl = await listen(server);
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
    path = `/cms/v1.0/getData/${(await cmsClient(target, "fast").create({ resourceName: "big.bin" }, content)).resourceURI}`;
  });
  afterAll(async () => {
    await close?.();
    await target?.close();
    await s3?.close();
  });

  it.each([
    ["a whole GET", {}, 200, content],
    ["a range", { range: "bytes=70000-70009" }, 206, content.subarray(70000, 70010)],
  ])(
    "Node: %s looks its row up once (the fast path hands the row it found to the app)",
    async (_what, headers: Record<string, string>, status, expected) => {
      lookups = 0;
      const res = await fetch(`${fastUrl}${path}`, { headers });
      expect(res.status).toBe(status);
      expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
      expect(lookups).toBe(1);
      expect(target.unhandledErrors()).toEqual([]);
    },
  );

  it("Bun: the fast path's null and the app's answer look its row up once", async () => {
    const fast = bunFastGet({ services, anonymousRead: true, cachedUpTo: 64 * 1024 });
    lookups = 0;
    const req = new Request(`http://127.0.0.1${path}`);
    expect(await fast(req, "req-1")).toBeNull();
    const res = await counted.fetch(req);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    expect(lookups).toBe(1);
  });
});

describe("getData fast path: a stored image derivative (issue 30)", () => {
  // Last in the file: libvips keeps the files it read open (its cache), which the fd counts above would see.
  let png: string;
  const data = (query: string) => `/cms/v1.0/getData/${png}?${query}`;
  beforeAll(async () => {
    const bytes = await sharp({ create: { width: 64, height: 32, channels: 4, background: "#36c" } })
      .png()
      .toBuffer();
    png = (await cmsClient(app, "fast").create({ resourceName: "pic.png", resourceMediaType: "image/png" }, bytes))
      .resourceURI;
  });

  it("leaves a derivative not yet made to the app, then answers it as the app does (GET, HEAD, range, 304)", async () => {
    const first = await decided(data("width=20&format=png"));
    expect(first).toMatchObject({ status: 200, answeredFast: false });
    // Stored now: the same parameters in another order and spelling of the same transform.
    const again = await decided(data("format=png&width=20"));
    expect(again).toMatchObject({ status: 200, answeredFast: true });
    expect(again.headers["content-type"]).toBe("image/png");
    expect(again.body).toBe(first.body);
    const etag = again.headers.etag as string;
    expect(await decided(data("width=20&format=png"), { method: "HEAD" })).toMatchObject({ answeredFast: true });
    const range = await decided(data("width=20&format=png"), { headers: { range: "bytes=2-9" } });
    expect(range).toMatchObject({ status: 206, answeredFast: true, body: first.body.slice(2, 10) });
    const notModified = await decided(data("width=20&format=png"), { headers: { "if-none-match": etag } });
    expect(notModified).toMatchObject({ status: 304, answeredFast: true });
  });

  it("Bun: answers the stored derivative as the app does, and leaves one not yet made to it", async () => {
    const fast = bunFastGet({ services: app.services, anonymousRead: true, cachedUpTo: 64 * 1024 });
    const path = data("format=png&width=20"); // stored (and cached) by the test above
    const reference = await answer(servers.plainUrl, path, { headers: { accept: "*/*" } });
    const res = await fast(new Request(`http://127.0.0.1${path}`, { headers: { accept: "*/*" } }), "req-1");
    expect(res).toBeInstanceOf(Response);
    const headers = Object.fromEntries([...res!.headers].filter(([name]) => name !== "x-request-id"));
    const body = Buffer.from(await res!.arrayBuffer()).toString("latin1");
    // Connection-level fields are node:http's, not the answer's.
    const { date: _date, connection: _connection, "keep-alive": _keepAlive, ...expected } = reference.headers;
    expect({ status: res!.status, headers, body }).toEqual({
      status: reference.status,
      headers: expected,
      body: reference.body,
    });
    // Known to be stored and its bytes cached: the Response itself, as a cached plain getData's (no promise).
    const again = fast(new Request(`http://127.0.0.1${path}`, { headers: { accept: "*/*" } }), "req-4");
    expect(again).toBeInstanceOf(Response);
    expect(Buffer.from(await (again as Response).arrayBuffer()).toString("latin1")).toBe(reference.body);
    expect(await fast(new Request(`http://127.0.0.1${data("width=21&format=png")}`), "req-2")).toBeNull();
    expect(await fast(new Request(`http://127.0.0.1${data("width=0")}`), "req-3")).toBeNull();
  });

  it("Node: a derivative known to be stored is sent in the request's own call, as a cached plain getData is", async () => {
    const path = data("width=20&format=png"); // stored (and cached) by the first test above
    const { url, sentInCall, close } = await inCallServer();
    try {
      const reference = await answer(servers.plainUrl, path);
      expect(await answer(url, path)).toMatchObject({ status: 200, body: reference.body });
      expect(sentInCall).toEqual([true]);
    } finally {
      await close();
    }
  });

  it("answers format=auto by Accept, with Vary: Accept, as the app does", async () => {
    const accept = { accept: "image/webp,*/*" };
    expect(await decided(data("width=12&format=auto"), { headers: accept })).toMatchObject({ answeredFast: false });
    const webp = await decided(data("width=12&format=auto"), { headers: accept });
    expect(webp).toMatchObject({ status: 200, answeredFast: true });
    expect(webp.headers["content-type"]).toBe("image/webp");
    expect(webp.headers.vary).toMatch(/Accept$/);
    // Its Vary with a range's fields, and on HEAD: the app's answer to the byte.
    const ranged = await decided(data("width=12&format=auto"), { headers: { ...accept, range: "bytes=1-5" } });
    expect(ranged).toMatchObject({ status: 206, answeredFast: true });
    expect(ranged.headers.vary).toMatch(/Accept$/);
    expect(await decided(data("width=12&format=auto"), { method: "HEAD", headers: accept })).toMatchObject({
      answeredFast: true,
    });
    // Another Accept names another derivative, not made yet: the app's.
    expect(await decided(data("width=12&format=auto"), { headers: { accept: "*/*" } })).toMatchObject({
      status: 200,
      answeredFast: false,
    });
  });

  it("parses each query text once: a bad one stays the app's 400, two queries never share an answer", async () => {
    const images = app.services.images!;
    const real = images.requested;
    const parsed: string[] = [];
    images.requested = (query) => {
      parsed.push(["width", "height", "fit", "format"].map((name) => query(name) ?? "").join("/"));
      return real(query);
    };
    try {
      expect(await decided(data("width=20&format=png"))).toMatchObject({ status: 200 }); // stored (made if not yet)
      parsed.length = 0;
      // The same transform, in a text not seen yet, from the fast path alone.
      const before = servers.fallbacks;
      for (let i = 0; i < 3; i++)
        expect((await answer(servers.fastUrl, data("fit=inside&width=20&format=png"))).status).toBe(200);
      expect(servers.fallbacks).toBe(before);
      expect(parsed).toEqual(["20//inside/png"]);
      // Remembered as "the app's": each time its 400, naming the parameter.
      for (let i = 0; i < 2; i++) {
        const bad = await decided(data("width=20&height=0&format=png"));
        expect(bad).toMatchObject({ status: 400, answeredFast: false });
        expect(JSON.parse(bad.body).errors).toEqual([expect.objectContaining({ pointer: "/query/height" })]);
      }
      // Another text, another transform (not made yet: the app's), then its own bytes.
      const other = await decided(data("fit=inside&width=21&format=png"));
      expect(other).toMatchObject({ status: 200, answeredFast: false });
      const otherAgain = await decided(data("fit=inside&width=21&format=png"));
      expect(otherAgain).toMatchObject({ status: 200, answeredFast: true, body: other.body });
      expect(otherAgain.body).not.toBe((await decided(data("fit=inside&width=20&format=png"))).body);
    } finally {
      images.requested = real;
    }
  });

  it("parses a miss once: the app answers with the fast path's parse, handed over with the row", async () => {
    const images = app.services.images!;
    const real = images.requested;
    let parsed = 0;
    images.requested = (query) => {
      parsed++;
      return real(query);
    };
    try {
      const before = servers.fallbacks;
      // Not made yet: the fast path parses it, finds nothing stored, and the app makes it.
      const made = await answer(servers.fastUrl, data("width=22&format=png"));
      expect(made.status).toBe(200);
      expect(servers.fallbacks).toBe(before + 1);
      expect(parsed).toBe(1);
    } finally {
      images.requested = real;
    }
  });

  it("leaves invalid parameters and any other query name to the app (its 400, its policy)", async () => {
    expect(await decided(data("width=0"))).toMatchObject({ status: 400, answeredFast: false });
    expect(await decided(data("width=20&width=21&format=png"))).toMatchObject({ answeredFast: false });
    expect(await decided(data("width=20&format=png&x=1"))).toMatchObject({ status: 200, answeredFast: false });
  });
});

describe("getData fast path: a versioned URL of the current content (issue 28)", () => {
  let uri: string;
  let uid: string;
  let sha256: string;
  const data = (query: string) => `/cms/v1.0/getData/${uri}?${query}`;
  beforeAll(async () => {
    const made = await cmsClient(app, "fast").create({ resourceName: "v.txt" }, "the first version");
    ({ resourceURI: uri, resourceUID: uid, sha256 } = made);
    await answer(servers.plainUrl, data(`v=${sha256.slice(0, 16)}`)); // the app's read fills the caches
  });

  it("answers ?v= of the current content as the app does, immutable (GET, HEAD, range, 304)", async () => {
    for (const v of [sha256.slice(0, 16), sha256, sha256.slice(0, 30).toUpperCase()]) {
      const got = await decided(data(`v=${v}`));
      expect(got).toMatchObject({ status: 200, answeredFast: true, body: "the first version" });
      expect(got.headers["cache-control"]).toMatch(/max-age=31536000, immutable/);
      expect(got.headers.link).toBeUndefined();
    }
    const v = `v=${sha256.slice(0, 16)}`;
    const etag = (await decided(data(v))).headers.etag as string;
    expect(await decided(data(v), { method: "HEAD" })).toMatchObject({ status: 200, answeredFast: true, body: "" });
    const range = await decided(data(v), { headers: { range: "bytes=4-8" } });
    expect(range).toMatchObject({ status: 206, answeredFast: true, body: "first" });
    expect(await decided(data(v), { headers: { "if-none-match": etag } })).toMatchObject({
      status: 304,
      answeredFast: true,
    });
    // The mutable URL keeps its own policy and its pointer to the versioned one.
    const mutable = await decided(`/cms/v1.0/getData/${uri}`);
    expect(mutable.headers["cache-control"]).not.toMatch(/immutable/);
    expect(mutable.headers.link).toContain(`?v=${sha256.slice(0, 16)}`);
  });

  it("leaves earlier versions, unknown or malformed ones and other queries to the app", async () => {
    const cms = cmsClient(app, "fast");
    const lock = await cms.lock(uid, "a");
    const updated = await cms.post("updateResource", {
      ...lock,
      resourceAuthor: "a",
      resourceBinary: base64("second"),
    });
    expect(updated.status, await updated.clone().text()).toBe(200);
    await cms.post("unlockResourceDTO", { resourceUID: uid, author: "a", lockID: lock.lockID });
    const old = await decided(data(`v=${sha256.slice(0, 16)}`));
    expect(old).toMatchObject({ status: 200, answeredFast: false, body: "the first version" });
    expect(await decided(data("v=0123456789abcdef"))).toMatchObject({ status: 404, answeredFast: false });
    expect(await decided(data("v=xyz"))).toMatchObject({ status: 400, answeredFast: false });
    expect(await decided(data(`v=${sha256.slice(0, 16)}&v=${sha256.slice(0, 16)}`))).toMatchObject({
      answeredFast: false,
    });
    const current = await decided(`/cms/v1.0/getData/${uri}`);
    const now = /\?v=([0-9a-f]{16})/.exec(current.headers.link as string)![1];
    expect(await decided(data(`v=${now}`))).toMatchObject({ status: 200, answeredFast: true, body: "second" });
  });

  it("Bun: answers ?v= of the current content as the app does, in the handler's call; an earlier one is the app's", async () => {
    const fast = bunFastGet({ services: app.services, anonymousRead: true, cachedUpTo: 64 * 1024 });
    const current = await answer(servers.plainUrl, `/cms/v1.0/getData/${uri}`);
    const now = /\?v=([0-9a-f]{16})/.exec(current.headers.link as string)![1];
    const path = data(`v=${now}`);
    const reference = await answer(servers.plainUrl, path);
    const res = fast(new Request(`http://127.0.0.1${path}`), "req-v");
    expect(res).toBeInstanceOf(Response);
    const headers = Object.fromEntries([...(res as Response).headers].filter(([name]) => name !== "x-request-id"));
    const { date: _date, connection: _connection, "keep-alive": _keepAlive, ...expected } = reference.headers;
    expect({ status: (res as Response).status, headers, body: await (res as Response).text() }).toEqual({
      status: reference.status,
      headers: expected,
      body: reference.body,
    });
    expect(await fast(new Request(`http://127.0.0.1${data(`v=${sha256.slice(0, 16)}`)}`), "req-old")).toBeNull();
  });
});
