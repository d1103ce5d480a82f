// SSRF policy, redirects, timeouts and streaming of the Node origin fetcher, against loopback servers only.
import http from "node:http";
import net, { type AddressInfo, type Socket } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ProblemError, type ProblemCode } from "../../src/problems.js";
import { createNodeFetchOrigin, type LookupAll } from "../../src/origin/node-fetch.js";

// ---------------------------------------------------------------------------------------------
// Network guard: every outgoing connection of this file must go to loopback. It wraps
// net.Socket#connect, rejects non-loopback IP literals and checks what any custom lookup answers.

const isLoopback = (ip: string) => ip.startsWith("127.") || ip === "::1";
const guard = { connects: 0, destinations: [] as string[] };
const realConnect = net.Socket.prototype.connect;

function guardedConnect(this: Socket, ...args: unknown[]): Socket {
  guard.connects++;
  const first = args[0];
  const opts = (Array.isArray(first) ? first[0] : first) as { host?: string; lookup?: net.LookupFunction } | undefined;
  if (opts && typeof opts === "object") {
    const host = opts.host ?? "localhost";
    if (net.isIP(host) !== 0) {
      guard.destinations.push(host);
      if (!isLoopback(host)) throw new Error(`test network rule: connect to ${host}`);
    }
    const inner = opts.lookup;
    if (inner) {
      opts.lookup = (hostname, lookupOptions, callback) =>
        inner(hostname, lookupOptions, (err, address, family) => {
          const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
          guard.destinations.push(...list);
          if (!err && list.some((a) => !isLoopback(a))) {
            callback(new Error(`test network rule: connect to ${list.join(",")}`), "", 0);
          } else if (Array.isArray(address)) {
            callback(err, address);
          } else {
            callback(err, address, family);
          }
        });
    }
  }
  return Reflect.apply(realConnect, this, args) as Socket;
}

beforeAll(() => {
  net.Socket.prototype.connect = guardedConnect as typeof realConnect;
});

afterAll(() => {
  net.Socket.prototype.connect = realConnect;
  expect(guard.destinations.filter((d) => !isLoopback(d))).toEqual([]);
});

// ---------------------------------------------------------------------------------------------
// Loopback origins that count connections and record requests.

interface TestOrigin {
  port: number;
  base: string;
  connections: number;
  closed: number;
  requests: { url: string; headers: http.IncomingHttpHeaders }[];
  close(): Promise<void>;
}

const running = new Set<TestOrigin>();

async function startOrigin(
  handler: http.RequestListener = (_req, res) => res.end("ok"),
  host = "127.0.0.1",
  listenPort = 0,
): Promise<TestOrigin> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listenPort, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin: TestOrigin = {
    port,
    base: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    connections: 0,
    closed: 0,
    requests: [],
    close: async () => {
      running.delete(origin);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on("connection", (socket: Socket) => {
    origin.connections++;
    sockets.add(socket);
    socket.on("close", () => {
      sockets.delete(socket);
      origin.closed++;
    });
  });
  server.on("request", (req: http.IncomingMessage) =>
    origin.requests.push({ url: req.url ?? "", headers: req.headers }),
  );
  running.add(origin);
  return origin;
}

afterEach(async () => {
  await Promise.all([...running].map((o) => o.close()));
});

// ---------------------------------------------------------------------------------------------
// Helpers.

async function expectProblem(promise: Promise<unknown>, code: ProblemCode): Promise<ProblemError> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ProblemError);
  const problem = caught as ProblemError;
  expect(problem.code).toBe(code);
  expect(problem.errors).toEqual([{ pointer: "/body/resourceExternalURI", detail: problem.message }]);
  return problem;
}

async function readText(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

/** A fake `dns.lookup({all:true})`: answers per name and per call number, counting calls. */
function fakeLookup(answers: Record<string, (call: number) => string[]>) {
  const calls: Record<string, number> = {};
  const lookup: LookupAll = (hostname, _options, callback) => {
    const n = (calls[hostname] = (calls[hostname] ?? 0) + 1);
    const answer = answers[hostname];
    if (!answer) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []);
      return;
    }
    setImmediate(() =>
      callback(
        null,
        answer(n).map((address) => ({ address, family: net.isIP(address) })),
      ),
    );
  };
  return { lookup, calls };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------

describe("SSRF: refused before connecting", () => {
  let v4: TestOrigin;
  let v6: TestOrigin | null;

  beforeAll(async () => {
    v4 = await startOrigin();
    v6 = await startOrigin(undefined, "::1").catch(() => null);
    running.delete(v4);
    if (v6) running.delete(v6);
  });

  afterAll(async () => {
    await v4.close();
    await v6?.close();
  });

  const FORMS: readonly [string, (p: number, p6: number) => string][] = [
    ["dotted loopback", (p) => `http://127.0.0.1:${p}/`],
    ["other 127/8", (p) => `http://127.0.0.2:${p}/`],
    ["localhost", (p) => `http://localhost:${p}/`],
    ["LOCALHOST", (p) => `http://LOCALHOST:${p}/`],
    // RFC 6761 §6.3: every *.localhost name is loopback; refused by name, never sent to DNS.
    ["localhost, trailing dot", (p) => `http://localhost.:${p}/`],
    ["a name under localhost", (p) => `http://app.localhost:${p}/`],
    ["a name under localhost, trailing dot", (p) => `http://A.B.Localhost.:${p}/`],
    ["IPv6 loopback", (_p, p6) => `http://[::1]:${p6}/`],
    ["IPv6 loopback, long form", (_p, p6) => `http://[0:0:0:0:0:0:0:1]:${p6}/`],
    ["decimal integer", (p) => `http://2130706433:${p}/`],
    ["hex integer", (p) => `http://0x7f000001:${p}/`],
    ["hex parts", (p) => `http://0x7f.1:${p}/`],
    ["octal part", (p) => `http://0177.0.0.1:${p}/`],
    ["short form", (p) => `http://127.1:${p}/`],
    ["trailing dot", (p) => `http://127.0.0.1.:${p}/`],
    ["percent-encoded", (p) => `http://%31%32%37.0.0.1:${p}/`],
    ["IPv4-mapped IPv6", (p) => `http://[::ffff:127.0.0.1]:${p}/`],
    ["NAT64 of loopback", (p) => `http://[64:ff9b::7f00:1]:${p}/`],
    ["unspecified", (p) => `http://0.0.0.0:${p}/`],
    ["unspecified, short", (p) => `http://0:${p}/`],
    ["IPv6 unspecified", (_p, p6) => `http://[::]:${p6}/`],
    ["https loopback", (p) => `https://127.0.0.1:${p}/`],
    ["cloud metadata", () => `http://169.254.169.254/latest/meta-data/`],
    ["AWS IPv6 metadata", () => `http://[fd00:ec2::254]/`],
    ["private 10/8", () => `http://10.0.0.1/`],
  ];

  it.each(FORMS)("refuses %s", async (_label, form) => {
    const fetchOrigin = createNodeFetchOrigin();
    const connectsBefore = guard.connects;
    const problem = await expectProblem(fetchOrigin(form(v4.port, v6?.port ?? v4.port)), "ORIGIN_REFUSED");
    expect(problem.message).toMatch(/not allowed/);
    // The refusal names the setting that would allow it (a developer's own machine is loopback).
    expect(problem.message).toContain("CMS_FETCH_ALLOW_PRIVATE=true");
    expect(guard.connects).toBe(connectsBefore);
    expect(v4.connections).toBe(0);
    expect(v6?.connections ?? 0).toBe(0);
  });

  it("refuses a name an injected lookup maps to 127.0.0.1, asking DNS once", async () => {
    const { lookup, calls } = fakeLookup({ "internal.test": () => ["127.0.0.1"] });
    const fetchOrigin = createNodeFetchOrigin({ lookup });
    const problem = await expectProblem(fetchOrigin(`http://internal.test:${v4.port}/`), "ORIGIN_REFUSED");
    expect(problem.message).toContain("internal.test (resolves to 127.0.0.1)");
    expect(problem.message).toContain("loopback");
    expect(calls).toEqual({ "internal.test": 1 });
    expect(v4.connections).toBe(0);
  });

  it.each([
    ["global first", ["8.8.8.8", "127.0.0.1"]],
    ["global last", ["127.0.0.1", "8.8.8.8"]],
    ["IPv6 mix", ["2606:4700::1111", "::1"]],
  ])("refuses a name resolving to any refused address (%s) without connecting anywhere", async (_label, answer) => {
    const { lookup, calls } = fakeLookup({ "mixed.test": () => answer });
    const fetchOrigin = createNodeFetchOrigin({ lookup });
    const connectsBefore = guard.connects;
    await expectProblem(fetchOrigin(`http://mixed.test:${v4.port}/`), "ORIGIN_REFUSED");
    expect(calls["mixed.test"]).toBe(1);
    // No socket was even asked to connect, so the fake global address was never contacted.
    expect(guard.connects).toBe(connectsBefore);
    expect(guard.destinations).not.toContain("8.8.8.8");
    expect(v4.connections).toBe(0);
  });

  it("re-checks the connected peer and sends it nothing if it is refused", async () => {
    const origin = await startOrigin();
    // Allows the literal before connecting, refuses the same address as the connected peer.
    let checks = 0;
    const fetchOrigin = createNodeFetchOrigin({ isAllowedAddress: () => ++checks === 1 });
    const problem = await expectProblem(fetchOrigin(`${origin.base}/`), "ORIGIN_REFUSED");
    expect(problem.message).toContain("127.0.0.1");
    expect(checks).toBe(2);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
    expect(origin.requests).toHaveLength(0);
  });

  it("the same origin is reachable with allowPrivate (so the zero counts above mean refusal)", async () => {
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true });
    const res = await fetchOrigin(`${v4.base}/`);
    expect(await readText(res.body)).toBe("ok");
    if (v6) expect(await readText((await fetchOrigin(`${v6.base}/`)).body)).toBe("ok");
    expect(v4.connections).toBe(1);
    expect(v6?.connections ?? 0).toBe(v6 ? 1 : 0);
  });
});

describe("URL policy", () => {
  it.each([
    "ftp://127.0.0.1/file",
    "file:///etc/passwd",
    "data:text/plain,hello",
    "javascript:alert(1)",
    "ws://127.0.0.1/",
    "gopher://127.0.0.1/",
  ])("refuses scheme of %s", async (url) => {
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true });
    const problem = await expectProblem(fetchOrigin(url), "ORIGIN_REFUSED");
    expect(problem.message).toMatch(/scheme/);
  });

  it.each(["user:secret@", "user@", ":secret@"])("refuses userinfo %s", async (userinfo) => {
    const origin = await startOrigin();
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true });
    const problem = await expectProblem(fetchOrigin(`http://${userinfo}127.0.0.1:${origin.port}/`), "ORIGIN_REFUSED");
    expect(problem.message).toMatch(/credentials/);
    expect(origin.connections).toBe(0);
  });

  it.each(["not a url", "/relative/path", "http://", "http://127.0.0.1:0/"])("refuses malformed %j", async (url) => {
    await expectProblem(createNodeFetchOrigin({ allowPrivate: true })(url), "ORIGIN_REFUSED");
  });
});

describe("redirects", () => {
  /** /hop/N redirects (relative Location) to /hop/N-1; /hop/0 answers. */
  const hops: http.RequestListener = (req, res) => {
    const n = Number(/^\/hop\/(\d+)$/.exec(req.url ?? "")?.[1] ?? "0");
    if (n > 0) {
      res.writeHead(302, { location: String(n - 1) }).end();
    } else {
      res.writeHead(200, { "content-type": "text/plain" }).end("done");
    }
  };

  it("follows 5 redirects with relative Locations and reports the final URL", async () => {
    const origin = await startOrigin(hops);
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/hop/5`);
    expect(await readText(res.body)).toBe("done");
    expect(res.url).toBe(`${origin.base}/hop/0`);
    expect(origin.requests.map((r) => r.url)).toEqual(["/hop/5", "/hop/4", "/hop/3", "/hop/2", "/hop/1", "/hop/0"]);
  });

  it("fails a 6th redirect with ORIGIN_FAILED", async () => {
    const origin = await startOrigin(hops);
    const problem = await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/hop/6`),
      "ORIGIN_FAILED",
    );
    expect(problem.message).toMatch(/more than 5/);
    expect(origin.requests).toHaveLength(6);
  });

  it("honours maxRedirects", async () => {
    const origin = await startOrigin(hops);
    await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true, maxRedirects: 0 })(`${origin.base}/hop/1`),
      "ORIGIN_FAILED",
    );
    const res = await createNodeFetchOrigin({ allowPrivate: true, maxRedirects: 1 })(`${origin.base}/hop/1`);
    expect(await readText(res.body)).toBe("done");
  });

  it.each([301, 302, 303, 307, 308])("follows %i", async (status) => {
    const origin = await startOrigin((req, res) => {
      if (req.url === "/start") res.writeHead(status, { location: "/target?x=1" }).end();
      else res.end(`at ${req.url}`);
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/start`);
    expect(await readText(res.body)).toBe("at /target?x=1");
    expect(res.url).toBe(`${origin.base}/target?x=1`);
  });

  it("treats a 3xx without Location as a failed final status", async () => {
    const origin = await startOrigin((_req, res) => res.writeHead(300).end());
    const problem = await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`),
      "ORIGIN_FAILED",
    );
    expect(problem.message).toMatch(/300/);
  });

  it("re-validates each hop: a redirect to a refused address never connects", async () => {
    const second = await startOrigin(undefined, "127.0.0.2");
    const first = await startOrigin((_req, res) => res.writeHead(302, { location: `${second.base}/secret` }).end());
    const fetchOrigin = createNodeFetchOrigin({ isAllowedAddress: (a) => a === "127.0.0.1" });
    const problem = await expectProblem(fetchOrigin(`${first.base}/`), "ORIGIN_REFUSED");
    expect(problem.message).toContain("127.0.0.2");
    expect(first.connections).toBe(1);
    expect(second.connections).toBe(0);
  });

  it.each([
    ["a refused scheme", () => "file:///etc/passwd", /scheme/],
    ["credentials", (base: string) => base.replace("http://", "http://user:pw@") + "/ok", /credentials/],
  ])("refuses a redirect to %s", async (_label, target, message) => {
    let base = "";
    const origin = await startOrigin((req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: target(base) }).end();
      else res.end("reached");
    });
    base = origin.base;
    const problem = await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/start`),
      "ORIGIN_REFUSED",
    );
    expect(problem.message).toMatch(message);
    expect(origin.requests.map((r) => r.url)).toEqual(["/start"]);
  });

  it("resolves each hop exactly once and connects to the checked address (DNS rebinding)", async () => {
    const rebound = await startOrigin(undefined, "127.0.0.2");
    let port = 0;
    const origin = await startOrigin((req, res) => {
      if (req.headers.host === `a.test:${port}`) res.writeHead(302, { location: `http://b.test:${port}/final` }).end();
      else res.end(`host ${req.headers.host}`);
    });
    port = origin.port;
    // Each name answers 127.0.0.1 the first time, then 127.0.0.2 (the "rebound" target).
    const rebinding = (call: number) => [call === 1 ? "127.0.0.1" : "127.0.0.2"];
    const { lookup, calls } = fakeLookup({ "a.test": rebinding, "b.test": rebinding });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: (a) => a === "127.0.0.1" });
    const res = await fetchOrigin(`http://a.test:${port}/start`);
    expect(await readText(res.body)).toBe(`host b.test:${port}`);
    expect(res.url).toBe(`http://b.test:${port}/final`);
    expect(calls).toEqual({ "a.test": 1, "b.test": 1 });
    expect(origin.connections).toBe(2);
    expect(rebound.connections).toBe(0);
  });

  it("re-resolves a name on its next hop and refuses it if the answer changed", async () => {
    const rebound = await startOrigin(undefined, "127.0.0.2");
    const origin = await startOrigin((req, res) => {
      if (req.url === "/start") res.writeHead(307, { location: "/again" }).end();
      else res.end("should not get here");
    });
    const { lookup, calls } = fakeLookup({ "a.test": (call) => [call === 1 ? "127.0.0.1" : "127.0.0.2"] });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: (a) => a === "127.0.0.1" });
    await expectProblem(fetchOrigin(`http://a.test:${origin.port}/start`), "ORIGIN_REFUSED");
    expect(calls).toEqual({ "a.test": 2 });
    expect(origin.requests.map((r) => r.url)).toEqual(["/start"]);
    expect(rebound.connections).toBe(0);
  });
});

describe("responses and failures", () => {
  it("returns metadata and sends only Accept, User-Agent and Accept-Encoding: identity", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": "11" }).end("hello world");
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true, userAgent: "test-agent/1" })(
      `${origin.base}/file.txt?v=1#frag`,
    );
    expect(res.contentType).toBe("text/plain; charset=utf-8");
    expect(res.contentLength).toBe(11);
    expect(res.url).toBe(`${origin.base}/file.txt?v=1#frag`);
    expect(await readText(res.body)).toBe("hello world");
    const [request] = origin.requests;
    expect(request?.url).toBe("/file.txt?v=1");
    expect(request?.headers).toMatchObject({
      accept: "*/*",
      "user-agent": "test-agent/1",
      "accept-encoding": "identity",
      host: `127.0.0.1:${origin.port}`,
    });
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.headers.cookie).toBeUndefined();
  });

  it.each([
    [
      "sha-256=:uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=:",
      "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
    ],
    ["sha-512=:AAAA:", null],
    ["sha-256=:not base64:", null],
  ])(
    "parses the origin's Repr-Digest %s into a plain sha-256 (or none): services get no header",
    async (field, hex) => {
      const origin = await startOrigin((_req, res) => res.writeHead(200, { "repr-digest": field }).end("hello world"));
      const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`);
      expect(res.reprSha256).toBe(hex);
      expect(res).not.toHaveProperty("reprDigest");
      await readText(res.body);
    },
  );

  it("reports null metadata when the origin sends none (chunked)", async () => {
    const origin = await startOrigin((_req, res) => {
      res.removeHeader("content-type");
      res.write("a");
      res.end("b");
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`);
    expect(res.contentType).toBeNull();
    expect(res.contentLength).toBeNull();
    expect(await readText(res.body)).toBe("ab");
  });

  it.each([404, 500])("fails a %i with ORIGIN_FAILED naming the status", async (status) => {
    const origin = await startOrigin((_req, res) => res.writeHead(status).end("nope"));
    const problem = await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`),
      "ORIGIN_FAILED",
    );
    expect(problem.message).toContain(String(status));
  });

  it("fails a refused connection with ORIGIN_FAILED", async () => {
    const origin = await startOrigin();
    const { base } = origin;
    await origin.close();
    const problem = await expectProblem(createNodeFetchOrigin({ allowPrivate: true })(`${base}/`), "ORIGIN_FAILED");
    expect(problem.message).toContain("ECONNREFUSED");
  });

  it("fails an unresolvable name with ORIGIN_FAILED", async () => {
    const { lookup } = fakeLookup({});
    const problem = await expectProblem(createNodeFetchOrigin({ lookup })("http://nowhere.test/"), "ORIGIN_FAILED");
    expect(problem.message).toContain("ENOTFOUND");
  });

  it("times out a resolver that never answers (connectTimeoutMs)", async () => {
    const lookup: LookupAll = () => undefined;
    const started = Date.now();
    await expectProblem(
      createNodeFetchOrigin({ lookup, connectTimeoutMs: 100 })("http://hang.test/"),
      "ORIGIN_TIMEOUT",
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("times out slow response headers (idleTimeoutMs) and closes the connection", async () => {
    const origin = await startOrigin(() => undefined);
    const started = Date.now();
    const problem = await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true, idleTimeoutMs: 150 })(`${origin.base}/`),
      "ORIGIN_TIMEOUT",
    );
    expect(problem.message).toMatch(/response headers/);
    expect(Date.now() - started).toBeLessThan(1000);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });

  it("times out slow headers with totalTimeoutMs too", async () => {
    const origin = await startOrigin(() => undefined);
    await expectProblem(
      createNodeFetchOrigin({ allowPrivate: true, totalTimeoutMs: 150 })(`${origin.base}/`),
      "ORIGIN_TIMEOUT",
    );
  });
});

describe("streaming", () => {
  it("errors the stream with ORIGIN_TIMEOUT when the body stalls past idleTimeoutMs", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("first");
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true, idleTimeoutMs: 150 })(`${origin.base}/`);
    const reader = res.body.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value ?? []).toString()).toBe("first");
    const started = Date.now();
    const problem = await expectProblem(reader.read(), "ORIGIN_TIMEOUT");
    expect(problem.message).toMatch(/no data/);
    expect(Date.now() - started).toBeLessThan(1000);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });

  it("does not count time the consumer spends not reading as idle", async () => {
    const origin = await startOrigin((_req, res) => res.end("all of it"));
    const res = await createNodeFetchOrigin({ allowPrivate: true, idleTimeoutMs: 100 })(`${origin.base}/`);
    await sleep(300);
    expect(await readText(res.body)).toBe("all of it");
  });

  it("errors the stream with ORIGIN_TIMEOUT when totalTimeoutMs passes mid-body", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write("tick\n"), 20);
      res.on("close", () => clearInterval(timer));
    });
    const started = Date.now();
    const res = await createNodeFetchOrigin({ allowPrivate: true, totalTimeoutMs: 400, idleTimeoutMs: 5_000 })(
      `${origin.base}/`,
    );
    const reader = res.body.getReader();
    let chunks = 0;
    const problem = await expectProblem(
      (async () => {
        for (;;) {
          const { done } = await reader.read();
          if (done) return;
          chunks++;
        }
      })(),
      "ORIGIN_TIMEOUT",
    );
    expect(problem.message).toMatch(/400 ms/);
    expect(chunks).toBeGreaterThan(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(1500);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });

  it("errors the stream with ORIGIN_FAILED when the origin drops the connection mid-body", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("partial");
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`);
    await expectProblem(readText(res.body), "ORIGIN_FAILED");
  });

  it("cancelling the stream closes the connection", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200);
      res.write("x".repeat(1024));
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`);
    const reader = res.body.getReader();
    await reader.read();
    await reader.cancel();
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });

  it("applies backpressure: a slowly read 64 MiB body is never buffered far ahead", async () => {
    const TOTAL = 64 * 1024 * 1024;
    const CHUNK = Buffer.alloc(64 * 1024, 0x61);
    const stats = { written: 0, drainWaits: 0 };
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200, { "content-length": String(TOTAL) });
      const pump = () => {
        while (stats.written < TOTAL) {
          stats.written += CHUNK.length;
          if (!res.write(CHUNK)) {
            stats.drainWaits++;
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/big`);
    expect(res.contentLength).toBe(TOTAL);
    const reader = res.body.getReader();
    let received = 0;
    let maxAhead = 0;
    // A slow consumer: while it sleeps, the origin may only fill socket and kernel buffers.
    const pauses = [
      { at: 1024 * 1024, ms: 300 },
      { at: 32 * 1024 * 1024, ms: 150 },
    ];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (pauses[0] && received >= pauses[0].at) {
        await sleep(pauses[0].ms);
        pauses.shift();
        maxAhead = Math.max(maxAhead, stats.written - received);
      }
    }
    expect(received).toBe(TOTAL);
    expect(stats.drainWaits).toBeGreaterThan(0);
    // Kernel socket buffers on loopback hold a few MiB at most; a buffering adapter would be ~TOTAL ahead.
    expect(maxAhead).toBeLessThan(16 * 1024 * 1024);
  });
});

describe("AbortSignal", () => {
  it("rejects at once with the reason of an already-aborted signal", async () => {
    const reason = new Error("caller gave up");
    const connectsBefore = guard.connects;
    await expect(
      createNodeFetchOrigin({ allowPrivate: true })("http://127.0.0.1:9/", { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(guard.connects).toBe(connectsBefore);
  });

  it("aborts while waiting for headers and closes the connection", async () => {
    const origin = await startOrigin(() => undefined);
    const controller = new AbortController();
    const reason = new Error("client went away");
    const pending = createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`, { signal: controller.signal });
    await vi.waitFor(() => expect(origin.requests).toHaveLength(1), { timeout: 1000 });
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });

  it("aborts while waiting for DNS", async () => {
    const controller = new AbortController();
    const lookup: LookupAll = () => undefined;
    const pending = createNodeFetchOrigin({ lookup })("http://hang.test/", { signal: controller.signal });
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });

  it("aborts a streaming body and closes the connection", async () => {
    const origin = await startOrigin((_req, res) => {
      res.writeHead(200);
      res.write("start");
    });
    const controller = new AbortController();
    const reason = new Error("client went away");
    const res = await createNodeFetchOrigin({ allowPrivate: true })(`${origin.base}/`, { signal: controller.signal });
    const reader = res.body.getReader();
    await reader.read();
    const next = reader.read();
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 1000 });
  });
});

describe("connection reuse (keep-alive pool)", () => {
  const fetchText = async (fetchOrigin: ReturnType<typeof createNodeFetchOrigin>, url: string) =>
    readText((await fetchOrigin(url)).body);

  it("reuses one connection for fetches to the same checked address, and closes it once idle", async () => {
    const origin = await startOrigin();
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true, idleConnectionMs: 500 });
    for (let i = 0; i < 3; i++) expect(await fetchText(fetchOrigin, `${origin.base}/${i}`)).toBe("ok");
    expect(origin.requests.map((r) => r.url)).toEqual(["/0", "/1", "/2"]);
    expect(origin.connections).toBe(1);
    expect(origin.closed).toBe(0);
    await vi.waitFor(() => expect(origin.closed).toBe(1), { timeout: 3000 });
  });

  it("opens a connection per fetch with idleConnectionMs: 0", async () => {
    const origin = await startOrigin();
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true, idleConnectionMs: 0 });
    for (let i = 0; i < 2; i++) expect(await fetchText(fetchOrigin, `${origin.base}/`)).toBe("ok");
    expect(origin.connections).toBe(2);
  });

  it("never reuses a connection for a name that now resolves to another address", async () => {
    const first = await startOrigin();
    const second = await startOrigin((_req, res) => res.end("second"), "127.0.0.2", first.port);
    const answers = ["127.0.0.1", "127.0.0.2", "127.0.0.1"];
    const { lookup, calls } = fakeLookup({ "a.test": (call) => [answers[call - 1] as string] });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: isLoopback });
    const url = `http://a.test:${first.port}/`;
    expect([
      await fetchText(fetchOrigin, url),
      await fetchText(fetchOrigin, url),
      await fetchText(fetchOrigin, url),
    ]).toEqual(["ok", "second", "ok"]);
    // Resolved and checked on every fetch; the third reuses the first's connection, the second has its own.
    expect(calls).toEqual({ "a.test": 3 });
    expect(first.connections).toBe(1);
    expect(first.requests).toHaveLength(2);
    expect(second.connections).toBe(1);
    expect(second.requests).toHaveLength(1);
  });

  it("does not share a connection between two names on the same address", async () => {
    const origin = await startOrigin((req, res) => res.end(req.headers.host));
    const { lookup } = fakeLookup({ "a.test": () => ["127.0.0.1"], "b.test": () => ["127.0.0.1"] });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: isLoopback });
    expect(await fetchText(fetchOrigin, `http://a.test:${origin.port}/`)).toBe(`a.test:${origin.port}`);
    expect(await fetchText(fetchOrigin, `http://b.test:${origin.port}/`)).toBe(`b.test:${origin.port}`);
    expect(origin.connections).toBe(2);
  });

  it("still refuses a name that now resolves to a refused address before connecting, a pooled connection open", async () => {
    const origin = await startOrigin();
    const { lookup, calls } = fakeLookup({ "a.test": (call) => [call === 1 ? "127.0.0.1" : "127.0.0.2"] });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: (a) => a === "127.0.0.1" });
    expect(await fetchText(fetchOrigin, `http://a.test:${origin.port}/`)).toBe("ok");
    const connectsBefore = guard.connects;
    await expectProblem(fetchOrigin(`http://a.test:${origin.port}/again`), "ORIGIN_REFUSED");
    expect(calls).toEqual({ "a.test": 2 });
    expect(guard.connects).toBe(connectsBefore);
    expect(origin.requests.map((r) => r.url)).toEqual(["/"]);
  });

  it("re-checks the peer of a pooled connection before sending on it", async () => {
    const origin = await startOrigin();
    // Allowed: the first fetch's literal and peer, the second's literal; refused: the pooled socket's peer.
    let checks = 0;
    const fetchOrigin = createNodeFetchOrigin({ isAllowedAddress: () => ++checks <= 3 });
    expect(await fetchText(fetchOrigin, `${origin.base}/`)).toBe("ok");
    await expectProblem(fetchOrigin(`${origin.base}/again`), "ORIGIN_REFUSED");
    expect(checks).toBe(4);
    expect(origin.connections).toBe(1);
    expect(origin.requests.map((r) => r.url)).toEqual(["/"]);
  });

  it("checks every redirect hop as before when the first hop reuses a pooled connection", async () => {
    let port = 0;
    const origin = await startOrigin((req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: `http://b.test:${port}/next` }).end();
      else res.end("ok");
    });
    port = origin.port;
    const { lookup, calls } = fakeLookup({ "a.test": () => ["127.0.0.1"], "b.test": () => ["127.0.0.2"] });
    const fetchOrigin = createNodeFetchOrigin({ lookup, isAllowedAddress: (a) => a === "127.0.0.1" });
    expect(await fetchText(fetchOrigin, `http://a.test:${port}/warm`)).toBe("ok");
    await expectProblem(fetchOrigin(`http://a.test:${port}/start`), "ORIGIN_REFUSED");
    expect(calls).toEqual({ "a.test": 2, "b.test": 1 });
    expect(origin.connections).toBe(1);
    expect(origin.requests.map((r) => r.url)).toEqual(["/warm", "/start"]);
  });

  it("sends the request again on a new connection when the origin closed the pooled one", async () => {
    const served = new WeakMap<object, number>();
    const origin = await startOrigin((req, res) => {
      const n = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, n);
      // A keep-alive connection the origin drops instead of answering its second request.
      if (n === 2) req.socket.destroy();
      else res.end(`answer ${req.url}`);
    });
    const fetchOrigin = createNodeFetchOrigin({ allowPrivate: true });
    expect(await fetchText(fetchOrigin, `${origin.base}/1`)).toBe("answer /1");
    expect(await fetchText(fetchOrigin, `${origin.base}/2`)).toBe("answer /2");
    expect(origin.requests.map((r) => r.url)).toEqual(["/1", "/2", "/2"]);
    expect(origin.connections).toBe(2);
  });
});
