/**
 * The Workers origin fetcher (Web APIs only, so it runs here on Node's fetch too): URL policy on
 * every hop, redirects, status and time limits, streaming. Network only to loopback test origins.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ProblemError } from "../../src/problems.js";
import { privateHostReason } from "../../src/origin/host-names.js";
import { createWorkerFetchOrigin } from "../../src/origin/worker-fetch.js";
import { type Origin, patternBytes, startOrigin } from "../helpers/origin.js";

let origin: Origin;
beforeAll(async () => {
  origin = await startOrigin();
});
afterAll(() => origin.close());

async function problemOf(promise: Promise<unknown>): Promise<ProblemError> {
  const err = await promise.then(
    () => {
      throw new Error("expected a ProblemError");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProblemError);
  expect((err as ProblemError).errors?.[0]?.pointer).toBe("/body/resourceExternalURI");
  return err as ProblemError;
}

const read = async (stream: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(stream).arrayBuffer());

/** A fetch that answers from a table and records every URL it was asked for. */
function scripted(answers: Record<string, () => Response | Promise<Response>>) {
  const calls: string[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL) => {
    const url = String(input);
    calls.push(url);
    const answer = answers[url];
    if (!answer) throw new TypeError(`unexpected fetch of ${url}`);
    return answer();
  });
  return { fetch: fetch as unknown as typeof globalThis.fetch, calls };
}

describe("privateHostReason", () => {
  it.each([
    ["127.0.0.1", /IP address literals/],
    ["[::1]", /IP address literals/],
    ["[fe80::1]", /IP address literals/],
    ["8.8.8.8", /IP address literals/],
    ["localhost", /single-label/],
    ["localhost.", /single-label/],
    ["api.localhost", /\.localhost/],
    ["metadata.google.internal", /\.internal/],
    ["printer.local", /\.local/],
    ["router.home.arpa", /\.arpa/],
    ["fileserver", /single-label/],
    ["host.corp", /\.corp/],
  ])("refuses %s", (host, why) => {
    expect(privateHostReason(host)).toMatch(why);
  });

  it.each(["example.com", "cdn.example.org", "a.b.c.example.net", "xn--bcher-kva.de"])("allows %s", (host) => {
    expect(privateHostReason(host)).toBeNull();
  });
});

describe("createWorkerFetchOrigin", () => {
  it.each([
    "http://127.0.0.1/x",
    "http://2130706433/x",
    "http://0x7f000001/x",
    "http://0177.0.0.1/x",
    "http://127.1/x",
    "http://[::ffff:7f00:1]/x",
    "http://localhost/x",
    "http://metadata.google.internal/computeMetadata/v1/",
    "ftp://example.com/x",
    "https://user:secret@example.com/x",
    "http://example.com:0/x",
    "not a url",
  ])("refuses %s without fetching anything", async (url) => {
    const { fetch, calls } = scripted({});
    const err = await problemOf(createWorkerFetchOrigin({ fetch })(url));
    expect(err.code).toBe("ORIGIN_REFUSED");
    expect(calls).toEqual([]);
  });

  it.each(["http://127.0.0.1:8080/x", "http://localhost/x", "http://10.0.0.1/x"])(
    "names CMS_FETCH_ALLOW_PRIVATE when it refuses the non-public host of %s",
    async (url) => {
      const { fetch } = scripted({});
      const err = await problemOf(createWorkerFetchOrigin({ fetch })(url));
      expect(err.message).toContain("set CMS_FETCH_ALLOW_PRIVATE=true");
    },
  );

  it.each([
    [
      "sha-256=:uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=:",
      "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9",
    ],
    ["sha-512=:AAAA:", null],
    ["sha-256=:not base64:", null],
    [null, null],
  ])(
    "parses the origin's Repr-Digest %s into a plain sha-256 (or none): services get no header",
    async (field, hex) => {
      const headers: Record<string, string> = field === null ? {} : { "repr-digest": field };
      const { fetch } = scripted({ "https://files.example.com/a": () => new Response("hello world", { headers }) });
      const res = await createWorkerFetchOrigin({ fetch })("https://files.example.com/a");
      expect(res.reprSha256).toBe(hex);
      expect(res).not.toHaveProperty("reprDigest");
      await read(res.body);
    },
  );

  it("checks every redirect hop and never fetches a refused one", async () => {
    const { fetch, calls } = scripted({
      "https://files.example.com/a": () => new Response(null, { status: 302, headers: { location: "/b" } }),
      "https://files.example.com/b": () =>
        new Response(null, { status: 301, headers: { location: "http://169.254.169.254/latest" } }),
    });
    const err = await problemOf(createWorkerFetchOrigin({ fetch })("https://files.example.com/a"));
    expect(err.code).toBe("ORIGIN_REFUSED");
    expect(err.message).toContain("169.254.169.254");
    expect(calls).toEqual(["https://files.example.com/a", "https://files.example.com/b"]);
  });

  it("fails after too many redirects and on error statuses", async () => {
    const loop = scripted({
      "https://loop.example.com/": () => new Response(null, { status: 307, headers: { location: "/" } }),
    });
    const tooMany = await problemOf(
      createWorkerFetchOrigin({ fetch: loop.fetch, maxRedirects: 3 })("https://loop.example.com/"),
    );
    expect(tooMany.code).toBe("ORIGIN_FAILED");
    expect(loop.calls).toHaveLength(4);

    const missing = scripted({
      "https://example.com/gone": () => new Response("no", { status: 404, statusText: "Not Found" }),
    });
    const status = await problemOf(createWorkerFetchOrigin({ fetch: missing.fetch })("https://example.com/gone"));
    expect(status.code).toBe("ORIGIN_FAILED");
    expect(status.message).toContain("404");
  });

  it("maps a network failure to ORIGIN_FAILED", async () => {
    const down = scripted({ "https://down.example.com/": () => Promise.reject(new TypeError("fetch failed")) });
    expect((await problemOf(createWorkerFetchOrigin({ fetch: down.fetch })("https://down.example.com/"))).code).toBe(
      "ORIGIN_FAILED",
    );
  });

  it("times out waiting for headers, for the next body chunk and for the whole fetch", async () => {
    const never = scripted({ "https://slow.example.com/": () => new Promise<Response>(() => {}) });
    const headers = await problemOf(
      createWorkerFetchOrigin({ fetch: never.fetch, idleTimeoutMs: 50 })("https://slow.example.com/"),
    );
    expect(headers.code).toBe("ORIGIN_TIMEOUT");

    const stalled = () =>
      new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array([1, 2, 3])) }), { status: 200 });
    const idle = scripted({ "https://stall.example.com/": stalled });
    const res = await createWorkerFetchOrigin({ fetch: idle.fetch, idleTimeoutMs: 50 })("https://stall.example.com/");
    expect((await problemOf(read(res.body))).code).toBe("ORIGIN_TIMEOUT");

    const total = scripted({ "https://stall.example.com/": stalled });
    const res2 = await createWorkerFetchOrigin({ fetch: total.fetch, totalTimeoutMs: 80 })(
      "https://stall.example.com/",
    );
    const err = await problemOf(read(res2.body));
    expect(err.code).toBe("ORIGIN_TIMEOUT");
    expect(err.message).toMatch(/not fetched within 80 ms/);
  });

  it("streams a loopback origin when private hosts are allowed, following redirects, sending no credentials", async () => {
    const bytes = patternBytes(0, 300_000);
    origin.put("wfo", bytes);
    const fetchOrigin = createWorkerFetchOrigin({ allowPrivate: true });
    const res = await fetchOrigin(origin.url("/redirect/2/wfo"));
    expect(res.contentLength).toBe(300_000);
    expect(res.url).toBe(origin.url("/bytes/wfo"));
    expect(await read(res.body)).toEqual(bytes);
    const seen = origin.requests.filter((r) => r.url.endsWith("wfo"));
    expect(seen.length).toBe(3);
    for (const r of seen) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers.cookie).toBeUndefined();
    }
    expect((await problemOf(fetchOrigin(origin.url("/status/503")))).code).toBe("ORIGIN_FAILED");
  });
});
