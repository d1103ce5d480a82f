/**
 * The content core (src/delivery/): one decision for the route and both runtimes' fast
 * paths. It must give exactly what RFC 9110's evaluation (`answerBlob`) gives, with the content
 * CORS headers, for any request; describe the bytes to send without reading any; return problems
 * instead of throwing them; and hand the runtimes one shared head per row so they can keep their
 * own form of it. `runtimeRead` is the one rule for which requests a runtime may answer itself.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answerBlob } from "../../src/http/answer-blob.js";
import { contentAnswers } from "../../src/delivery/decide.js";
import { fastParams } from "../../src/delivery/query.js";
import { runtimeRead } from "../../src/delivery/runtime-reads.js";
import { contentEntities } from "../../src/delivery/content-entity.js";
import { CONTENT_CORS_HEADERS } from "../../src/http/middleware/cors.js";
import type { ContentFacts } from "../../src/metadata/content-facts.js";

// The decision does no I/O: a content service whose read fails the test if it is ever called.
const content = {
  contentOrigin: undefined,
  read: () => {
    throw new Error("the core read a blob");
  },
};
const answers = contentAnswers(content);
const row = (size = 10): ContentFacts =>
  Object.freeze({
    blobKey: `sha256/${"a".repeat(64)}`,
    size,
    sha256: "a".repeat(64),
    mediaType: "text/plain",
    name: "docs/a.txt",
    updatedAt: Date.parse("2024-05-01T12:34:56Z"),
  });
const fieldsOf =
  (fields: Record<string, string | undefined>) =>
  (name: string): string | undefined =>
    fields[name];
const none = fieldsOf({});
const etag = `"${"a".repeat(64)}"`;

describe("contentAnswers().decide", () => {
  it("is one per content service", () => {
    expect(contentAnswers(content)).toBe(answers);
  });

  it("answers a plain GET with the row's shared head and the whole blob; HEAD with no body", () => {
    const r = row();
    const get = answers.decide(r, "GET", none, "h");
    expect(get).toMatchObject({
      status: 200,
      shared: true,
      fields: undefined,
      body: { start: 0, end: 9, whole: true },
    });
    expect(get.problem).toBeUndefined();
    const head = answers.decide(r, "HEAD", none, "h");
    expect(head).toMatchObject({ status: 200, shared: true, body: null });
    // One frozen object per row and host: a sender keeps its own form of it by identity.
    expect(!get.problem && !head.problem && get.head === head.head && Object.isFrozen(get.head)).toBe(true);
    expect(get.problem || get.head).toMatchObject({ ...CONTENT_CORS_HEADERS, "content-length": "10", etag });
    const other = answers.decide(r, "GET", none, "other-host");
    expect(!other.problem && !get.problem && other.head !== get.head).toBe(true);
  });

  it("frames a plain single range over the shared head (Content-Length, Content-Range)", () => {
    const answer = answers.decide(row(), "GET", fieldsOf({ range: "bytes=2-5" }), "h");
    expect(answer).toMatchObject({
      status: 206,
      shared: true,
      fields: { "content-length": "4", "content-range": "bytes 2-5/10" },
      body: { start: 2, end: 5, whole: false },
    });
  });

  it("answers a plain revalidation with the row's shared 304 head; any other with its own", () => {
    const r = row();
    const plain = answers.decide(r, "GET", fieldsOf({ "if-none-match": etag }), "h");
    expect(plain).toMatchObject({ status: 304, shared: true, fields: undefined, body: null });
    // The same frozen head for the weak form, for HEAD, and beside fields that cannot change a 304.
    const alike = [
      answers.decide(r, "HEAD", fieldsOf({ "if-none-match": `W/${etag}` }), "h"),
      answers.decide(
        r,
        "GET",
        fieldsOf({ "if-none-match": etag, range: "bytes=0-1", "want-content-digest": "sha-256=5" }),
        "h",
      ),
      answers.decide(
        r,
        "GET",
        fieldsOf({ "if-none-match": etag, "if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT" }),
        "h",
      ),
    ];
    for (const answer of alike) expect(!answer.problem && !plain.problem && answer.head === plain.head).toBe(true);
    expect(plain.problem || Object.isFrozen(plain.head)).toBe(true);
    expect(plain.problem || plain.head).toEqual({
      "cache-control": "private, no-cache",
      etag,
      "last-modified": "Wed, 01 May 2024 12:34:56 GMT",
      vary: "Want-Content-Digest",
      ...CONTENT_CORS_HEADERS,
    });
    // A list, a precondition evaluated first, or a spelling of its own: the evaluation decides, in a head of its own.
    for (const fields of [
      { "if-none-match": `"other", ${etag}` },
      { "if-none-match": etag, "if-match": etag },
      { "if-none-match": etag, "if-unmodified-since": "Wed, 01 May 2024 12:34:56 GMT" },
      { "if-none-match": ` ${etag}` },
    ]) {
      expect(answers.decide(r, "GET", fieldsOf(fields), "h")).toMatchObject({ status: 304, shared: false, body: null });
    }
    expect(answers.decide(r, "GET", fieldsOf({ "if-none-match": '"other"' }), "h")).toMatchObject({ status: 200 });
  });

  it("describes 304, multipart and an empty blob without a body to read", () => {
    expect(answers.decide(row(), "GET", fieldsOf({ "if-none-match": "*" }), "h")).toMatchObject({
      status: 304,
      shared: false,
      body: null,
    });
    const multi = answers.decide(row(), "GET", fieldsOf({ range: "bytes=0-1,4-5" }), "h");
    expect(multi).toMatchObject({ status: 206, body: null });
    expect(multi.problem || multi.multipart).toBeDefined();
    // An empty blob's GET: a body of no bytes (a sender need not touch storage).
    expect(answers.decide(row(0), "GET", none, "h")).toMatchObject({ status: 200, body: { start: 0, end: -1 } });
  });

  it("returns 412, 416 and 405 as problems instead of throwing them", () => {
    const code = (method: string, fields: Record<string, string>) => {
      const answer = answers.decide(row(), method, fieldsOf(fields), "h");
      return answer.problem?.code;
    };
    expect(code("GET", { "if-match": '"other"' })).toBe("PRECONDITION_FAILED");
    expect(code("GET", { range: "bytes=10-" })).toBe("RANGE_NOT_SATISFIABLE");
    expect(code("POST", {})).toBe("METHOD_NOT_ALLOWED");
  });

  it("gives answerBlob's status and headers (with the content CORS headers) for any request", () => {
    const r = row();
    const entity = contentEntities(content).serve(r, "h").entity;
    const request = fc.record({
      method: fc.constantFrom("GET", "HEAD"),
      range: fc.option(fc.constantFrom("bytes=0-3", "bytes=-2", "bytes=5-", "bytes=0-1,6-7", "bytes=20-", "items=1-2")),
      "if-range": fc.option(fc.constantFrom(etag, '"other"')),
      "if-none-match": fc.option(fc.constantFrom(etag, `W/${etag}`, '"other"', "*", `"other", ${etag}`)),
      "if-match": fc.option(fc.constantFrom(etag, '"other"')),
      "if-unmodified-since": fc.option(
        fc.constantFrom("Thu, 01 Jan 1970 00:00:00 GMT", "Wed, 01 May 2024 12:34:56 GMT"),
      ),
      "if-modified-since": fc.option(fc.constantFrom("Thu, 01 Jan 1970 00:00:00 GMT", "Wed, 01 May 2024 12:34:56 GMT")),
      "want-content-digest": fc.option(fc.constant("sha-256=5")),
    });
    fc.assert(
      fc.property(request, ({ method, ...fields }) => {
        const header = (name: string) => (fields as Record<string, string | null>)[name] ?? undefined;
        let expected: ReturnType<typeof answerBlob> | { code: string };
        try {
          expected = answerBlob(method, header, entity);
        } catch (err) {
          expected = { code: (err as { code: string }).code };
        }
        const answer = answers.decide(r, method, header, "h");
        if ("code" in expected) return void expect(answer.problem?.code).toBe(expected.code);
        if (answer.problem) throw answer.problem;
        expect(answer.status).toBe(expected.status);
        // Multipart boundaries are random per answer.
        const unbounded = (headers: Record<string, string>) => ({
          ...headers,
          "content-type": headers["content-type"]?.replace(/boundary=\w+/, "boundary=B"),
        });
        expect(unbounded({ ...answer.head, ...answer.fields })).toEqual(
          unbounded({ ...expected.headers, ...CONTENT_CORS_HEADERS }),
        );
        const sent = method === "GET" && expected.status !== 304 && !expected.multipart;
        const range = expected.range ?? { start: 0, end: 9 };
        expect(answer.body && { start: answer.body.start, end: answer.body.end }).toEqual(sent ? range : null);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("runtimeRead: what a runtime may answer before the app", () => {
  const path = "/cms/v1.0/getData/ctx/docs/a.txt";
  it("names the resource of a plain GET or HEAD, with the path as sent", () => {
    expect(runtimeRead("GET", path)).toEqual({ context: "ctx", path: "docs/a.txt", rawPath: path });
    expect(runtimeRead("HEAD", path)).toEqual({ context: "ctx", path: "docs/a.txt", rawPath: path });
  });
  it("leaves everything else to the app", () => {
    expect(runtimeRead("POST", path)).toBeNull();
    // A query reaches the runtime, which answers only a `v` alone or image parameters alone (fastParams)
    // when reads are open, and a signed link's (signed-read.test.ts); image ones mixed with others or with
    // `v`, escapes, are the app's.
    expect(runtimeRead("GET", `${path}?expires=1&signature=x`)).toEqual({
      context: "ctx",
      path: "docs/a.txt",
      rawPath: path,
      query: "expires=1&signature=x",
    });
    expect(fastParams("expires=1&signature=x")).toBeNull();
    expect(fastParams("width=64&signature=x")).toBeNull();
    expect(fastParams("width=64&width=65")).toBeNull();
    expect(fastParams("width=64")?.("width")).toBe("64");
    expect(fastParams("v=0123456789abcdef")?.("v")).toBe("0123456789abcdef");
    expect(fastParams("v=0123456789abcdef&width=64")).toBeNull();
    expect(fastParams("width=64&v=0123456789abcdef")).toBeNull();
    expect(fastParams("width=6%34")).toBeNull();
    expect(fastParams("")).toBeNull();
    expect(runtimeRead("GET", "/cms/v1.0/getData/ctx/docs/a%20b.txt")).toBeNull();
    expect(runtimeRead("GET", "/cms/v1.0/getDataUuid/x")).toBeNull();
    expect(runtimeRead("GET", "/cms/v1.0/getData/ctx")).toBeNull();
    expect(runtimeRead("GET", undefined)).toBeNull();
  });
});
