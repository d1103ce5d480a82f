import { describe, expect, it } from "vitest";
import { problemResponse, ProblemError } from "../../src/problems.js";
import { MAX_RANGES } from "../../src/http/range.js";
import { answerBlob, DEFAULT_CACHE_CONTROL, serveBlob } from "../../src/http/answer-blob.js";
import type { BlobEntity, OpenBlob } from "../../src/http/blob-entity.js";
import { formatHttpDate, parseHttpDate } from "../../src/http/http-date.js";
import { CONTENT_EXPOSE_HEADERS } from "../../src/http/middleware/cors.js";
import type { ByteRange } from "../../src/storage/blob-store.js";

/** What every content answer lets a script read (CORS). */
const CONTENT_EXPOSE = CONTENT_EXPOSE_HEADERS.join(",");

// Binary content on purpose (includes CR, LF, NUL and high bytes) so framing bugs can't hide.
const DATA = Uint8Array.from({ length: 100 }, (_, i) => (i * 37 + 13) % 256);
const LAST_MODIFIED = new Date("2024-05-01T12:34:56.789Z");
const LAST_MODIFIED_HTTP = "Wed, 01 May 2024 12:34:56 GMT";
const ETAG = '"abc123"';

const entity = (overrides: Partial<BlobEntity> = {}): BlobEntity => ({
  size: DATA.byteLength,
  etag: ETAG,
  lastModified: LAST_MODIFIED,
  contentType: "application/octet-stream",
  filename: "data.bin",
  ...overrides,
});

const rangeKey = (range?: ByteRange) => (range ? `${range.start}-${range.end}` : "all");

/**
 * An in-memory blob: `open` slices `data` into a pull-based stream of `chunkSize` chunks and logs
 * every open, chunk and cancel, so tests can prove what was (and wasn't) read, and in what order.
 */
function memoryBlob(data: Uint8Array = DATA, options: { chunkSize?: number; shortBy?: number; extra?: number } = {}) {
  const { chunkSize = 7, shortBy = 0, extra = 0 } = options;
  const calls: (ByteRange | undefined)[] = [];
  const log: string[] = [];
  const open: OpenBlob = async (range) => {
    calls.push(range);
    const key = rangeKey(range);
    log.push(`open ${key}`);
    const slice = range ? data.slice(range.start, range.end + 1 + extra) : data.slice();
    const bytes = slice.subarray(0, slice.byteLength - shortBy);
    let offset = 0;
    return new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (offset >= bytes.byteLength) return controller.close();
          log.push(`chunk ${key}@${offset}`);
          controller.enqueue(bytes.slice(offset, offset + chunkSize));
          offset += chunkSize;
        },
        cancel() {
          log.push(`cancel ${key}`);
        },
      },
      { highWaterMark: 0 },
    );
  };
  return { open, calls, log };
}

const request = (headers: Record<string, string> = {}, method = "GET") =>
  new Request("http://blobs.test/blob", { method, headers });

const bodyBytes = async (response: Response) => new Uint8Array(await response.arrayBuffer());

async function rejection(promise: Promise<unknown>): Promise<ProblemError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ProblemError);
    return err as ProblemError;
  }
  throw new Error("expected serveBlob to throw");
}

// Byte-exact (latin1) view of a body, so binary parts can be split on ASCII delimiters.
const latin1 = (bytes: Uint8Array) => Array.from(bytes, (b) => String.fromCharCode(b)).join("");
const fromLatin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));

interface Part {
  headers: Record<string, string>;
  data: Uint8Array;
}

/** A strict multipart/byteranges decoder (RFC 9110 §14.6 / RFC 2046 §5.1.1) with no preamble or epilogue. */
function decodeMultipart(body: Uint8Array, contentType: string): Part[] {
  const match = /^multipart\/byteranges; boundary=([0-9a-f]{32})$/.exec(contentType);
  expect(match, contentType).not.toBeNull();
  const boundary = match?.[1] ?? "";
  const text = latin1(body);
  const open = `--${boundary}\r\n`;
  const close = `\r\n--${boundary}--\r\n`;
  expect(text.startsWith(open)).toBe(true);
  expect(text.endsWith(close)).toBe(true);
  return text
    .slice(open.length, -close.length)
    .split(`\r\n--${boundary}\r\n`)
    .map((part) => {
      const split = part.indexOf("\r\n\r\n");
      expect(split).toBeGreaterThan(0);
      const headers: Record<string, string> = {};
      for (const line of part.slice(0, split).split("\r\n")) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      return { headers, data: fromLatin1(part.slice(split + 4)) };
    });
}

describe("serveBlob: full responses", () => {
  it("serves GET with every representation header and the full body", async () => {
    const blob = memoryBlob();
    const res = await serveBlob(request(), entity(), blob.open);
    expect(res.status).toBe(200);
    expect(Object.fromEntries(res.headers)).toEqual({
      "accept-ranges": "bytes",
      etag: ETAG,
      "last-modified": LAST_MODIFIED_HTTP,
      "x-content-type-options": "nosniff",
      "content-disposition": 'inline; filename="data.bin"',
      "content-type": "application/octet-stream",
      "content-length": "100",
      "cache-control": DEFAULT_CACHE_CONTROL,
      vary: "Want-Content-Digest",
      "access-control-expose-headers": CONTENT_EXPOSE,
    });
    expect(await bodyBytes(res)).toEqual(DATA);
    expect(blob.calls).toEqual([undefined]);
  });

  it("lets extraHeaders override defaults and add headers, but not the framing", async () => {
    const blob = memoryBlob();
    const res = await serveBlob(request({ range: "bytes=0-9" }), entity(), blob.open, {
      "Cache-Control": "public, max-age=60",
      Vary: "Authorization",
      "Content-Length": "1",
      "Content-Range": "bytes 0-0/1",
    });
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("vary")).toBe("Authorization");
    expect(res.headers.get("content-length")).toBe("10");
    expect(res.headers.get("content-range")).toBe("bytes 0-9/100");
  });

  it("encodes a unicode filename in Content-Disposition", async () => {
    const res = await serveBlob(request(), entity({ filename: 'résumé "final".pdf' }), memoryBlob().open);
    expect(res.headers.get("content-disposition")).toBe(
      `inline; filename="resume \\"final\\".pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
  });

  it("sends the entity's disposition and Content-Security-Policy on 200 and 206, and neither on 304", async () => {
    const guarded = entity({ disposition: "attachment", contentSecurityPolicy: "sandbox" });
    for (const res of [
      await serveBlob(request(), guarded, memoryBlob().open),
      await serveBlob(request({ range: "bytes=0-9" }), guarded, memoryBlob().open),
    ]) {
      expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename=/);
      expect(res.headers.get("content-security-policy")).toBe("sandbox");
    }
    const notModified = await serveBlob(request({ "if-none-match": ETAG }), guarded, memoryBlob().open);
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("content-security-policy")).toBeNull();
  });

  it("answers HEAD with the same status and headers as GET, without opening the blob", async () => {
    const blob = memoryBlob();
    const get = await serveBlob(request(), entity(), memoryBlob().open);
    const head = await serveBlob(request({}, "HEAD"), entity(), blob.open);
    expect(head.status).toBe(200);
    expect(Object.fromEntries(head.headers)).toEqual(Object.fromEntries(get.headers));
    expect(head.body).toBeNull();
    expect(blob.calls).toEqual([]);
  });

  it("ignores Range on HEAD (RFC 9110 §14.2: range handling is defined for GET only)", async () => {
    const blob = memoryBlob();
    for (const range of ["bytes=0-9", "bytes=0-9,20-29", "bytes=500-"]) {
      const res = await serveBlob(request({ range }, "HEAD"), entity(), blob.open);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe("100");
      expect(res.headers.get("content-range")).toBeNull();
      expect(res.body).toBeNull();
    }
    expect(blob.calls).toEqual([]);
  });

  it("serves an empty blob as 200 with an empty body and no storage read", async () => {
    const blob = memoryBlob(new Uint8Array(0));
    const res = await serveBlob(request(), entity({ size: 0 }), blob.open);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe("0");
    expect((await bodyBytes(res)).byteLength).toBe(0);
    expect(blob.calls).toEqual([]);
  });

  it("answers any Range on an empty blob with 416 bytes */0", async () => {
    for (const range of ["bytes=0-", "bytes=0-0", "bytes=-5"]) {
      const blob = memoryBlob(new Uint8Array(0));
      const err = await rejection(serveBlob(request({ range }), entity({ size: 0 }), blob.open));
      expect(err.status).toBe(416);
      expect(err.headers?.["content-range"]).toBe("bytes */0");
      expect(blob.calls).toEqual([]);
    }
  });

  it("falls back to application/octet-stream for a stored media type that isn't a clean header value", async () => {
    const res = await serveBlob(
      request({ range: "bytes=0-0,5-5" }),
      entity({ contentType: "text/plain\r\nX-Evil: 1" }),
      memoryBlob().open,
    );
    const parts = decodeMultipart(await bodyBytes(res), res.headers.get("content-type") ?? "");
    expect(parts.map((p) => p.headers)).toEqual([
      { "content-type": "application/octet-stream", "content-range": "bytes 0-0/100" },
      { "content-type": "application/octet-stream", "content-range": "bytes 5-5/100" },
    ]);
  });

  it("rejects other methods with 405 and Allow", async () => {
    const blob = memoryBlob();
    const err = await rejection(serveBlob(request({}, "POST"), entity(), blob.open));
    expect(err.code).toBe("METHOD_NOT_ALLOWED");
    expect(err.headers?.allow).toBe("GET, HEAD");
    expect(blob.calls).toEqual([]);
  });
});

describe("serveBlob: single ranges", () => {
  it.each([
    ["bytes=10-19", 10, 19],
    ["bytes=0-0", 0, 0],
    ["bytes=99-99", 99, 99],
    ["bytes=-1", 99, 99],
    ["bytes=-30", 70, 99],
    ["bytes=-1000", 0, 99],
    ["bytes=90-", 90, 99],
    ["bytes=95-500", 95, 99],
    ["bytes=0-", 0, 99],
    ["BYTES = 3 - 4", 3, 4],
  ])("%s → 206 bytes %i-%i", async (range, start, end) => {
    const blob = memoryBlob();
    const res = await serveBlob(request({ range }), entity(), blob.open);
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/100`);
    expect(res.headers.get("content-length")).toBe(String(end - start + 1));
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("etag")).toBe(ETAG);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(await bodyBytes(res)).toEqual(DATA.slice(start, end + 1));
    expect(blob.calls).toEqual([{ start, end }]);
  });

  it.each(["bytes=100-", "bytes=100-100", "bytes=250-300", "bytes=-0", "bytes=100-,200-"])(
    "%s → 416 with Content-Range bytes */100, without opening the blob",
    async (range) => {
      const blob = memoryBlob();
      const err = await rejection(serveBlob(request({ range }), entity(), blob.open));
      expect(err.code).toBe("RANGE_NOT_SATISFIABLE");
      expect(err.status).toBe(416);
      expect(err.headers).toMatchObject({ "content-range": "bytes */100", etag: ETAG });
      expect(blob.calls).toEqual([]);
      // And the app's problem renderer passes the header through.
      const rendered = problemResponse(err);
      expect(rendered.status).toBe(416);
      expect(rendered.headers.get("content-range")).toBe("bytes */100");
    },
  );

  it.each(["items=0-5", "bytes=5-3", "bytes=abc", "bytes", "bytes=-", "bytes=0-1;2-3"])(
    "ignores %j and serves 200 full",
    async (range) => {
      const blob = memoryBlob();
      const res = await serveBlob(request({ range }), entity(), blob.open);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-range")).toBeNull();
      expect(res.headers.get("content-length")).toBe("100");
      expect(await bodyBytes(res)).toEqual(DATA);
      expect(blob.calls).toEqual([undefined]);
    },
  );
});

describe("serveBlob: multiple ranges", () => {
  it("serves multipart/byteranges with per-part headers and an exact Content-Length", async () => {
    const blob = memoryBlob();
    const res = await serveBlob(
      request({ range: "bytes=0-9, 50-59, -5" }),
      entity({ contentType: "text/csv" }),
      blob.open,
    );
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBeNull();
    const body = await bodyBytes(res);
    expect(res.headers.get("content-length")).toBe(String(body.byteLength));
    const parts = decodeMultipart(body, res.headers.get("content-type") ?? "");
    expect(parts).toEqual([
      { headers: { "content-type": "text/csv", "content-range": "bytes 0-9/100" }, data: DATA.slice(0, 10) },
      { headers: { "content-type": "text/csv", "content-range": "bytes 50-59/100" }, data: DATA.slice(50, 60) },
      { headers: { "content-type": "text/csv", "content-range": "bytes 95-99/100" }, data: DATA.slice(95, 100) },
    ]);
    expect(blob.calls).toEqual([
      { start: 0, end: 9 },
      { start: 50, end: 59 },
      { start: 95, end: 99 },
    ]);
  });

  it("keeps the client's order for disjoint ranges and drops unsatisfiable ones", async () => {
    const blob = memoryBlob();
    const res = await serveBlob(request({ range: "bytes=60-64,500-600,1-2" }), entity(), blob.open);
    const body = await bodyBytes(res);
    expect(res.headers.get("content-length")).toBe(String(body.byteLength));
    const parts = decodeMultipart(body, res.headers.get("content-type") ?? "");
    expect(parts.map((p) => p.headers["content-range"])).toEqual(["bytes 60-64/100", "bytes 1-2/100"]);
    expect(parts.map((p) => p.data)).toEqual([DATA.slice(60, 65), DATA.slice(1, 3)]);
  });

  it("uses a fresh random boundary per response", async () => {
    const a = await serveBlob(request({ range: "bytes=0-0,2-2" }), entity(), memoryBlob().open);
    const b = await serveBlob(request({ range: "bytes=0-0,2-2" }), entity(), memoryBlob().open);
    expect(a.headers.get("content-type")).not.toBe(b.headers.get("content-type"));
  });

  it("opens nothing until read, then each part lazily, in order, after the previous one is drained", async () => {
    const blob = memoryBlob(DATA, { chunkSize: 4 });
    const res = await serveBlob(request({ range: "bytes=0-9,20-23" }), entity(), blob.open);
    expect(blob.log).toEqual([]);
    const reader = res.body?.getReader();
    if (!reader) throw new Error("expected a body");
    await reader.read(); // first part's headers
    expect(blob.log).toEqual(["open 0-9"]);
    await reader.read(); // first data chunk: exactly one chunk pulled from storage (backpressure)
    expect(blob.log).toEqual(["open 0-9", "chunk 0-9@0"]);
    while (!(await reader.read()).done);
    expect(blob.log).toEqual(["open 0-9", "chunk 0-9@0", "chunk 0-9@4", "chunk 0-9@8", "open 20-23", "chunk 20-23@0"]);
  });

  it("cancels the open part when the client goes away", async () => {
    const blob = memoryBlob(DATA, { chunkSize: 2 });
    const res = await serveBlob(request({ range: "bytes=0-9,20-29" }), entity(), blob.open);
    const reader = res.body?.getReader();
    if (!reader) throw new Error("expected a body");
    await reader.read();
    await reader.read();
    await reader.cancel("client gone");
    expect(blob.log).toEqual(["open 0-9", "chunk 0-9@0", "cancel 0-9"]);
  });

  it("fails the body, rather than mis-framing it, when storage returns a short part", async () => {
    const res = await serveBlob(request({ range: "bytes=0-9,20-29" }), entity(), memoryBlob(DATA, { shortBy: 3 }).open);
    await expect(res.arrayBuffer()).rejects.toThrow(/short/);
  });

  it("truncates a part when storage returns too much, keeping Content-Length exact", async () => {
    const res = await serveBlob(request({ range: "bytes=0-9,20-29" }), entity(), memoryBlob(DATA, { extra: 5 }).open);
    const body = await bodyBytes(res);
    expect(res.headers.get("content-length")).toBe(String(body.byteLength));
    const parts = decodeMultipart(body, res.headers.get("content-type") ?? "");
    expect(parts.map((p) => p.data)).toEqual([DATA.slice(0, 10), DATA.slice(20, 30)]);
  });

  describe("overlap and abuse policy", () => {
    it("coalesces overlapping ranges into a single-part 206", async () => {
      const blob = memoryBlob();
      const res = await serveBlob(request({ range: "bytes=0-50,25-75" }), entity(), blob.open);
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe("bytes 0-75/100");
      expect(await bodyBytes(res)).toEqual(DATA.slice(0, 76));
      expect(blob.calls).toEqual([{ start: 0, end: 75 }]);
    });

    it("coalesces adjacent ranges", async () => {
      const res = await serveBlob(request({ range: "bytes=10-19,20-29" }), entity(), memoryBlob().open);
      expect(res.headers.get("content-range")).toBe("bytes 10-29/100");
    });

    it("coalesces overlapping ranges within a multipart answer, sorted by start", async () => {
      const blob = memoryBlob();
      const res = await serveBlob(request({ range: "bytes=80-89,0-9,5-14" }), entity(), blob.open);
      const body = await bodyBytes(res);
      expect(res.headers.get("content-length")).toBe(String(body.byteLength));
      const parts = decodeMultipart(body, res.headers.get("content-type") ?? "");
      expect(parts.map((p) => p.headers["content-range"])).toEqual(["bytes 0-14/100", "bytes 80-89/100"]);
      expect(parts.map((p) => p.data)).toEqual([DATA.slice(0, 15), DATA.slice(80, 90)]);
      expect(blob.calls).toEqual([
        { start: 0, end: 14 },
        { start: 80, end: 89 },
      ]);
    });

    it("never amplifies repeated whole-file ranges", async () => {
      const blob = memoryBlob();
      const range = `bytes=${Array.from({ length: MAX_RANGES }, () => "0-").join(",")}`;
      const res = await serveBlob(request({ range }), entity(), blob.open);
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe("bytes 0-99/100");
      expect(await bodyBytes(res)).toEqual(DATA);
      expect(blob.calls).toEqual([{ start: 0, end: 99 }]);
    });

    it("serves MAX_RANGES disjoint ranges as multipart", async () => {
      const range = `bytes=${Array.from({ length: MAX_RANGES }, (_, i) => `${i}-${i}`)
        .filter((_, i) => i % 2 === 0)
        .join(",")}`;
      const res = await serveBlob(request({ range }), entity(), memoryBlob().open);
      const body = await bodyBytes(res);
      expect(res.headers.get("content-length")).toBe(String(body.byteLength));
      const parts = decodeMultipart(body, res.headers.get("content-type") ?? "");
      expect(parts).toHaveLength(MAX_RANGES / 2);
      parts.forEach((part, n) => {
        expect(part.headers["content-range"]).toBe(`bytes ${n * 2}-${n * 2}/100`);
        expect(part.data).toEqual(DATA.slice(n * 2, n * 2 + 1));
      });
    });

    it("serves the full representation for more than MAX_RANGES ranges", async () => {
      const blob = memoryBlob();
      const range = `bytes=${Array.from({ length: MAX_RANGES + 1 }, (_, i) => `${i}-${i}`).join(",")}`;
      const res = await serveBlob(request({ range }), entity(), blob.open);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBe("100");
      expect(await bodyBytes(res)).toEqual(DATA);
      expect(blob.calls).toEqual([undefined]);
    });
  });
});

describe("serveBlob: If-Range", () => {
  const cases: [string, string, number][] = [
    ["a matching strong ETag", ETAG, 206],
    ["a different ETag", '"other"', 200],
    ["a weak ETag, even with the same opaque tag", `W/${ETAG}`, 200],
    ["the exact Last-Modified date", LAST_MODIFIED_HTTP, 206],
    ["a date one second later", "Wed, 01 May 2024 12:34:57 GMT", 200],
    ["a date one second earlier", "Wed, 01 May 2024 12:34:55 GMT", 200],
    ["garbage", "not a validator", 200],
    ["an unquoted ETag", "abc123", 200],
  ];
  it.each(cases)("with %s → %i", async (_, ifRange, status) => {
    const blob = memoryBlob();
    const res = await serveBlob(request({ range: "bytes=0-9", "if-range": ifRange }), entity(), blob.open);
    expect(res.status).toBe(status);
    if (status === 206) {
      expect(res.headers.get("content-range")).toBe("bytes 0-9/100");
      expect(await bodyBytes(res)).toEqual(DATA.slice(0, 10));
      expect(blob.calls).toEqual([{ start: 0, end: 9 }]);
    } else {
      expect(res.headers.get("content-range")).toBeNull();
      expect(await bodyBytes(res)).toEqual(DATA);
      expect(blob.calls).toEqual([undefined]);
    }
  });

  it("does not turn a failed If-Range into a 416 for an unsatisfiable range", async () => {
    const res = await serveBlob(request({ range: "bytes=500-", "if-range": '"stale"' }), entity(), memoryBlob().open);
    expect(res.status).toBe(200);
  });

  it("is ignored without a Range header", async () => {
    const res = await serveBlob(request({ "if-range": '"stale"' }), entity(), memoryBlob().open);
    expect(res.status).toBe(200);
    expect(await bodyBytes(res)).toEqual(DATA);
  });
});

describe("serveBlob: If-None-Match and If-Modified-Since", () => {
  async function expectNotModified(headers: Record<string, string>, method = "GET") {
    const blob = memoryBlob();
    const res = await serveBlob(request(headers, method), entity(), blob.open, { vary: "Authorization" });
    expect(res.status).toBe(304);
    expect(Object.fromEntries(res.headers)).toEqual({
      etag: ETAG,
      "last-modified": LAST_MODIFIED_HTTP,
      "cache-control": DEFAULT_CACHE_CONTROL,
      vary: "Authorization",
      "access-control-expose-headers": CONTENT_EXPOSE,
    });
    expect(res.body).toBeNull();
    expect(blob.calls).toEqual([]);
  }
  async function expectFull(headers: Record<string, string>) {
    const blob = memoryBlob();
    const res = await serveBlob(request(headers), entity(), blob.open);
    expect(res.status).toBe(200);
    expect(await bodyBytes(res)).toEqual(DATA);
    expect(blob.calls).toEqual([undefined]);
  }

  it("304 for the exact ETag", () => expectNotModified({ "if-none-match": ETAG }));
  it("304 for HEAD too", () => expectNotModified({ "if-none-match": ETAG }, "HEAD"));
  it("304 when the ETag is in a list", () => expectNotModified({ "if-none-match": '"x", "y,z" ,, "abc123"' }));
  it("304 for *", () => expectNotModified({ "if-none-match": "*" }));
  it("304 for a weak match (weak comparison)", () => expectNotModified({ "if-none-match": `W/${ETAG}` }));
  it("200 for non-matching ETags", () => expectFull({ "if-none-match": '"x", W/"y"' }));
  it("200 for a malformed list", () => expectFull({ "if-none-match": "abc123" }));
  it("304 wins over a Range", () => expectNotModified({ "if-none-match": ETAG, range: "bytes=0-9" }));

  it("still serves a Range when If-None-Match doesn't match", async () => {
    const res = await serveBlob(request({ "if-none-match": '"old"', range: "bytes=0-9" }), entity(), memoryBlob().open);
    expect(res.status).toBe(206);
    expect(await bodyBytes(res)).toEqual(DATA.slice(0, 10));
  });

  it("304 when If-Modified-Since equals Last-Modified", () =>
    expectNotModified({ "if-modified-since": LAST_MODIFIED_HTTP }));
  it("304 when If-Modified-Since is newer", () =>
    expectNotModified({ "if-modified-since": "Thu, 02 May 2024 00:00:00 GMT" }));
  it("304 compares at second precision (Last-Modified has 789 ms)", () =>
    expectNotModified({ "if-modified-since": "Wed, 01 May 2024 12:34:56 GMT" }));
  it("304 for the obsolete RFC 850 and asctime forms", async () => {
    await expectNotModified({ "if-modified-since": "Wednesday, 01-May-24 12:34:56 GMT" });
    await expectNotModified({ "if-modified-since": "Wed May  1 12:34:56 2024" });
  });
  it("200 when If-Modified-Since is older", () => expectFull({ "if-modified-since": "Wed, 01 May 2024 12:34:55 GMT" }));
  it("200 (ignored) when If-Modified-Since is invalid", async () => {
    await expectFull({ "if-modified-since": "yesterday" });
    await expectFull({ "if-modified-since": "2030-01-01T00:00:00Z" });
    await expectFull({ "if-modified-since": `${LAST_MODIFIED_HTTP}, ${LAST_MODIFIED_HTTP}` });
  });

  it("If-None-Match beats If-Modified-Since: no ETag match → 200 despite a newer date", () =>
    expectFull({ "if-none-match": '"old"', "if-modified-since": "Thu, 02 May 2024 00:00:00 GMT" }));
  it("If-None-Match beats If-Modified-Since: ETag match → 304 despite an older date", () =>
    expectNotModified({ "if-none-match": ETAG, "if-modified-since": "Mon, 01 Jan 2024 00:00:00 GMT" }));
});

describe("serveBlob: If-Match and If-Unmodified-Since", () => {
  async function expectFailed(headers: Record<string, string>, method = "GET") {
    const blob = memoryBlob();
    const err = await rejection(serveBlob(request(headers, method), entity(), blob.open));
    expect(err.code).toBe("PRECONDITION_FAILED");
    expect(err.status).toBe(412);
    expect(err.headers?.etag).toBe(ETAG);
    expect(blob.calls).toEqual([]);
  }
  async function expectOk(headers: Record<string, string>) {
    const res = await serveBlob(request(headers), entity(), memoryBlob().open);
    expect(res.status).toBe(200);
    expect(await bodyBytes(res)).toEqual(DATA);
  }

  it("412 when If-Match doesn't match", () => expectFailed({ "if-match": '"other"' }));
  it("412 on HEAD too", () => expectFailed({ "if-match": '"other"' }, "HEAD"));
  it("412 for a weak If-Match (strong comparison)", () => expectFailed({ "if-match": `W/${ETAG}` }));
  it("412 for a malformed If-Match", () => expectFailed({ "if-match": "abc123" }));
  it("200 when If-Match matches", () => expectOk({ "if-match": ETAG }));
  it("200 when If-Match lists the ETag", () => expectOk({ "if-match": `"a", ${ETAG}` }));
  it("200 for If-Match: *", () => expectOk({ "if-match": "*" }));

  it("412 when If-Unmodified-Since is older", () =>
    expectFailed({ "if-unmodified-since": "Wed, 01 May 2024 12:34:55 GMT" }));
  it("200 when If-Unmodified-Since equals Last-Modified", () =>
    expectOk({ "if-unmodified-since": LAST_MODIFIED_HTTP }));
  it("200 when If-Unmodified-Since is newer", () =>
    expectOk({ "if-unmodified-since": "Thu, 02 May 2024 00:00:00 GMT" }));
  it("200 (ignored) when If-Unmodified-Since is invalid", () => expectOk({ "if-unmodified-since": "long ago" }));

  it("If-Match beats If-Unmodified-Since: match → 200 despite an older date", () =>
    expectOk({ "if-match": ETAG, "if-unmodified-since": "Mon, 01 Jan 2024 00:00:00 GMT" }));
  it("If-Match beats If-Unmodified-Since: mismatch → 412 despite a newer date", () =>
    expectFailed({ "if-match": '"other"', "if-unmodified-since": "Thu, 02 May 2024 00:00:00 GMT" }));
  it("412 beats 304 (If-Match is evaluated before If-None-Match)", () =>
    expectFailed({ "if-match": '"other"', "if-none-match": ETAG }));
  it("412 beats Range", () => expectFailed({ "if-match": '"other"', range: "bytes=0-9" }));
  it("a passing If-Match still allows 304 from If-None-Match", async () => {
    const res = await serveBlob(request({ "if-match": ETAG, "if-none-match": ETAG }), entity(), memoryBlob().open);
    expect(res.status).toBe(304);
  });
});

describe("HTTP-date", () => {
  const expected = Date.UTC(1994, 10, 6, 8, 49, 37);

  it("parses the three RFC 9110 §5.6.7 forms", () => {
    expect(parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT")?.getTime()).toBe(expected);
    expect(parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT")?.getTime()).toBe(expected);
    expect(parseHttpDate("Sun Nov  6 08:49:37 1994")?.getTime()).toBe(expected);
  });

  it("puts two-digit years no more than 50 years in the future", () => {
    const now = new Date().getUTCFullYear();
    const soon = String((now + 10) % 100).padStart(2, "0");
    const far = String((now + 60) % 100).padStart(2, "0");
    expect(parseHttpDate(`Monday, 01-Jan-${soon} 00:00:00 GMT`)?.getUTCFullYear()).toBe(now + 10);
    expect(parseHttpDate(`Monday, 01-Jan-${far} 00:00:00 GMT`)?.getUTCFullYear()).toBe(now + 60 - 100);
  });

  it.each([
    "",
    "Sun, 06 Nov 1994 08:49:37 UTC",
    "sun, 06 nov 1994 08:49:37 gmt",
    "Sun, 6 Nov 1994 08:49:37 GMT",
    "Sun, 31 Feb 1994 08:49:37 GMT",
    "Sun, 06 Nov 1994 24:00:00 GMT",
    "Sun, 06 Nov 1994 08:60:00 GMT",
    "1994-11-06T08:49:37Z",
    "784111777",
  ])("rejects %j", (value) => {
    expect(parseHttpDate(value)).toBeUndefined();
  });

  it("formats IMF-fixdate at second precision", () => {
    expect(formatHttpDate(new Date(Date.UTC(1994, 10, 6, 8, 49, 37, 999)))).toBe("Sun, 06 Nov 1994 08:49:37 GMT");
  });
});

describe("content already in memory (OpenBlob returning bytes)", () => {
  const openBytes: OpenBlob = async (range) => (range ? DATA.slice(range.start, range.end + 1) : DATA.slice());
  const get = (headers: Record<string, string> = {}) =>
    serveBlob(new Request("http://cms.test/x", { headers }), entity(), openBytes);

  it("answers the whole content and a single range from the bytes", async () => {
    const full = await get();
    expect(full.status).toBe(200);
    expect(full.headers.get("content-length")).toBe("100");
    expect(new Uint8Array(await full.arrayBuffer())).toEqual(DATA);

    const part = await get({ range: "bytes=10-19" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/100");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(DATA.slice(10, 20));
  });

  it("builds multipart/byteranges from byte parts with an exact Content-Length", async () => {
    const res = await get({ range: "bytes=0-4,90-99" });
    expect(res.status).toBe(206);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(String(body.byteLength)).toBe(res.headers.get("content-length"));
    const text = new TextDecoder("latin1").decode(body);
    expect(text).toContain("Content-Range: bytes 0-4/100");
    expect(text).toContain("Content-Range: bytes 90-99/100");
  });
});

describe("serveBlob: digests (RFC 9530)", () => {
  // SHA-256 of DATA, computed by Web Crypto (not by the code under test).
  const sha256Of = async (bytes: Uint8Array<ArrayBuffer>) => {
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return {
      hex: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
      b64: btoa(String.fromCharCode(...digest)),
    };
  };

  it("sends Repr-Digest of the whole representation on 200, HEAD, 206 and multipart 206", async () => {
    const { hex, b64 } = await sha256Of(DATA);
    const field = `sha-256=:${b64}:`;
    const withDigest = entity({ sha256: hex });
    for (const [headers, method] of [
      [{}, "GET"],
      [{}, "HEAD"],
      [{ range: "bytes=5-9" }, "GET"],
      [{ range: "bytes=0-1,5-9" }, "GET"],
    ] as const) {
      const res = await serveBlob(request(headers, method), withDigest, memoryBlob().open);
      expect(res.headers.get("repr-digest"), JSON.stringify(headers)).toBe(field);
      expect(res.headers.get("content-digest")).toBeNull();
      await res.arrayBuffer();
    }
  });

  it("adds Content-Digest to a full response when Want-Content-Digest asks for sha-256, never to a range", async () => {
    const { hex, b64 } = await sha256Of(DATA);
    const withDigest = entity({ sha256: hex });
    const full = await serveBlob(
      request({ "want-content-digest": "sha-512=3, sha-256=7" }),
      withDigest,
      memoryBlob().open,
    );
    expect(full.headers.get("content-digest")).toBe(`sha-256=:${b64}:`);
    expect((await sha256Of(await bodyBytes(full))).b64).toBe(b64);
    const range = await serveBlob(
      request({ "want-content-digest": "sha-256=7", range: "bytes=0-9" }),
      withDigest,
      memoryBlob().open,
    );
    expect(range.status).toBe(206);
    expect(range.headers.get("content-digest")).toBeNull();
    await range.arrayBuffer();
    for (const want of ["sha-256=0", "sha-512=9", "nonsense,,", "sha-256=11"]) {
      const res = await serveBlob(request({ "want-content-digest": want }), withDigest, memoryBlob().open);
      expect(res.headers.get("content-digest"), want).toBeNull();
      await res.arrayBuffer();
    }
  });

  it("sends no digest for an entity without one, and none on a 304", async () => {
    const plain = await serveBlob(request(), entity(), memoryBlob().open);
    expect(plain.headers.get("repr-digest")).toBeNull();
    await plain.arrayBuffer();
    const { hex } = await sha256Of(DATA);
    const notModified = await serveBlob(request({ "if-none-match": ETAG }), entity({ sha256: hex }), memoryBlob().open);
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("repr-digest")).toBeNull();
  });
});

describe("answerBlob on a frozen entity (the content service's answer for a cached row)", () => {
  it("gives every request the answer a fresh entity gets: one answer's fields never reach the next", () => {
    const fields = { ...entity(), sha256: "a".repeat(64), contentSecurityPolicy: "sandbox" };
    const frozen = Object.freeze({ ...fields });
    const requests: [string, Record<string, string>][] = [
      ["GET", { range: "bytes=10-19" }],
      ["GET", {}],
      ["GET", { "want-content-digest": "sha-256=5" }],
      ["GET", {}],
      ["HEAD", {}],
      ["GET", { "if-none-match": ETAG }],
      ["GET", { range: "bytes=0-4,50-59" }],
      ["GET", { range: "bytes=90-" }],
      ["GET", {}],
    ];
    for (const [method, headers] of requests) {
      const header = (name: string) => headers[name];
      const fresh = answerBlob(method, header, { ...fields });
      const answer = answerBlob(method, header, frozen);
      const { multipart: _m, ...expected } = fresh;
      const { multipart: _n, ...got } = answer;
      // A multipart answer's boundary is random: compare its headers without it.
      const unbound = (h: Record<string, string>) => ({
        ...h,
        "content-type": (h["content-type"] ?? "").replace(/boundary=.*/, "boundary="),
      });
      expect({ ...got, headers: unbound(got.headers) }).toEqual({ ...expected, headers: unbound(expected.headers) });
    }
  });

  it("keeps a frozen entity's headers apart from extra headers (revisions, packages)", () => {
    const frozen = Object.freeze({ ...entity() });
    expect(answerBlob("GET", () => undefined, frozen, { "Cache-Control": "no-store" }).headers["cache-control"]).toBe(
      "no-store",
    );
    expect(answerBlob("GET", () => undefined, frozen).headers["cache-control"]).toBe(DEFAULT_CACHE_CONTROL);
  });
});
