/**
 * The getData fast path (src/runtime/node/fast-get.ts) must give exactly the answer the Hono route
 * gives, and hand everything else to the app. Two real servers over the same deps on 127.0.0.1:
 * one with the fast path (its fallback to the app counted, to know who answered), one with the app alone.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withFastGet } from "../../src/runtime/node/fast-get.js";
import type { CachedBlobStore } from "../../src/storage/drivers/cached.js";
import { cmsClient } from "../helpers/cms-client.js";
import { getWithHost } from "../helpers/host-request.js";
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
  const fast = createServer(withFastGet({ services: target.services, logger: target.deps.logger, anonymousRead: true }, counted));
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

/** Status, headers (but the per-request ones) and body. */
async function answer(base: string, path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date" && name !== "x-request-id"));
  return { status: res.status, headers, body: await res.text(), requestId: res.headers.get("x-request-id") };
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

  it("leaves a blob that is not in memory to the app, whose full read caches it", async () => {
    (app.deps.blobs as CachedBlobStore).clear();
    expect((await decided(`/cms/v1.0/getData/${uri}`)).answeredFast).toBe(false);
    expect((await decided(`/cms/v1.0/getData/${uri}`)).answeredFast).toBe(true);
  });

  it("answers a cached blob itself, exactly as the app does (GET, HEAD, one range, 304)", async () => {
    const get = await decided(`/cms/v1.0/getData/${uri}`);
    expect(get).toMatchObject({ status: 200, body: content, answeredFast: true });
    expect(get.headers).toMatchObject({ "content-length": "20", "access-control-allow-origin": "*", etag: expect.stringMatching(/^"[0-9a-f]{64}"$/) });

    expect(await decided(`/cms/v1.0/getData/${uri}`, { method: "HEAD" })).toMatchObject({ status: 200, body: "", answeredFast: true });
    expect(await decided(`/cms/v1.0/getData/${uri}`, { headers: { range: "bytes=2-5" } })).toMatchObject({
      status: 206,
      body: "2345",
      answeredFast: true,
    });
    expect(await decided(`/cms/v1.0/getData/${uri}`, { headers: { "if-none-match": get.headers.etag as string } })).toMatchObject({
      status: 304,
      body: "",
      answeredFast: true,
    });
  });

  it("sends stored HTML with the same sandbox policy as the app", async () => {
    const page = (await cmsClient(app, "fast").create({ resourceName: "page.html", resourceMediaType: "text/html" }, "<script>1</script>")).resourceURI;
    await decided(`/cms/v1.0/getData/${page}`); // cached by now
    const got = await decided(`/cms/v1.0/getData/${page}`);
    expect(got).toMatchObject({ status: 200, answeredFast: true });
    expect(got.headers["content-security-policy"]).toMatch(/^sandbox;/);
  });

  it("keeps the request id (the access line is written around it, test/runtime/access-log.test.ts)", async () => {
    const before = servers.fallbacks;
    const res = await fetch(`${servers.fastUrl}/cms/v1.0/getData/${uri}`, { headers: { "x-request-id": "fast-trace-1" } });
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
    for (const path of [`/cms/v1.0/getData/${uri}x`, `/cms/v1.0/getData/${uri.replace("/", "%2F")}`, "/cms/v1.0/getData/only-a-context"]) {
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
    const page = (await cmsClient(split, "split").create({ resourceName: "p.html", resourceMediaType: "text/html" }, "<b>x</b>")).resourceURI;
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
