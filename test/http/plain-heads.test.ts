import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { answerBlob } from "../../src/http/answer-blob.js";
import type { BlobEntity } from "../../src/http/blob-entity.js";
import { ANSWER_FIELDS, isPlainRequest, plainHeads, plainRange } from "../../src/http/plain-heads.js";
import { contentRange } from "../../src/http/range.js";

const entity: BlobEntity = {
  sha256: "a".repeat(64),
  size: 10,
  etag: '"abc"',
  lastModified: new Date("2024-05-01T12:34:56Z"),
  contentType: "text/plain",
  filename: "a.txt",
};

/** The request fields answerBlob asks for, with `present` given a value (everything else absent). */
function fieldsRead(method: string, present: Record<string, string> = {}): string[] {
  const read: string[] = [];
  answerBlob(
    method,
    (name) => {
      read.push(name);
      return present[name];
    },
    entity,
  );
  return read;
}

describe("plain requests", () => {
  it("lists every field answerBlob reads (If-Range only counts with Range, which is listed)", () => {
    const read = new Set([...fieldsRead("GET"), ...fieldsRead("HEAD"), ...fieldsRead("GET", { range: "bytes=0-1" })]);
    read.delete("if-range");
    // A field answerBlob starts reading must be listed, or plain requests would be answered without it.
    expect([...read].sort()).toEqual([...ANSWER_FIELDS].sort());
  });

  it("is plain only with none of those fields (an empty value still counts)", () => {
    expect(isPlainRequest(() => undefined)).toBe(true);
    for (const field of ANSWER_FIELDS) {
      expect(
        isPlainRequest((name) => (name === field ? "" : undefined)),
        field,
      ).toBe(false);
    }
    expect(isPlainRequest((name) => (name === "if-range" ? '"abc"' : name === "accept" ? "*/*" : undefined))).toBe(
      true,
    );
  });
});

describe("plainHeads", () => {
  it("builds once per row and host, and again for another row object or host", () => {
    const built: string[] = [];
    const head = plainHeads((row: { id: string }, host: string | undefined) => {
      built.push(`${row.id}@${host}`);
      return `${row.id}@${host}`;
    });
    const row = { id: "a" };
    expect([head(row, "h1"), head(row, "h1")]).toEqual(["a@h1", "a@h1"]);
    expect(head({ id: "a" }, "h1")).toBe("a@h1"); // an equal but new row (changed rows are new objects)
    expect(head(row, "h2")).toBe("a@h2");
    expect(head(row, undefined)).toBe("a@undefined");
    expect(built).toEqual(["a@h1", "a@h1", "a@h2", "a@undefined"]);
  });
});

describe("plainRange", () => {
  const plain = answerBlob("GET", () => undefined, entity).headers;
  const rangeSpec = fc.oneof(
    fc.tuple(fc.nat(14), fc.nat(14)).map(([a, b]) => `${a}-${b}`),
    fc.nat(14).map((a) => `${a}-`),
    fc.nat(14).map((n) => `-${n}`),
    fc.constantFrom("x", "", "5-2", "1-2-3"),
  );
  /** A field there `present` times in 4 (fc.record's optional keys are nearly always there). */
  const maybe = (value: fc.Arbitrary<string>, present = 1) =>
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 - present }, { arbitrary: value, weight: present });
  const request = fc.record({
    range: maybe(
      fc.oneof(
        fc.array(rangeSpec, { minLength: 1, maxLength: 3 }).map((specs) => `bytes=${specs.join(",")}`),
        fc.constantFrom("items=0-1", "bytes=0-1, 4-5"),
      ),
      3,
    ),
    "if-range": maybe(fc.constantFrom('"abc"', '"other"')),
    "if-none-match": maybe(fc.constantFrom('"abc"', '"other"', "*")),
    "if-modified-since": maybe(fc.constantFrom("Thu, 01 Jan 1970 00:00:00 GMT", "Wed, 01 May 2024 12:34:56 GMT")),
    "want-content-digest": maybe(fc.constant("sha-256=5")),
  });

  it("names a range only where answerBlob gives that one range, with the plain head's fields and its framing", () => {
    let named = 0;
    fc.assert(
      fc.property(request, (fields) => {
        const header = (name: string) => (fields as Record<string, string | undefined>)[name];
        const range = plainRange(header, entity.size);
        if (!range) return;
        named++;
        const answer = answerBlob("GET", header, entity);
        expect(answer).toMatchObject({ status: 206, range });
        const framed = {
          ...plain,
          "content-length": String(range.end - range.start + 1),
          "content-range": contentRange(range, entity.size),
        };
        expect(answer.headers).toEqual(framed);
      }),
      { numRuns: 3000 },
    );
    expect(named).toBeGreaterThan(50); // not vacuous: 130–153 in trial runs (3000 × ¾ × (¾)⁴ × the single satisfiable share)
  });

  it("answers the plain single ranges it can, and leaves the rest to answerBlob", () => {
    const only = (range: string, more: Record<string, string> = {}) =>
      plainRange((name) => ({ range, ...more })[name], entity.size);
    expect(only("bytes=2-5")).toEqual({ start: 2, end: 5 });
    expect(only("bytes=-3")).toEqual({ start: 7, end: 9 });
    expect(only("bytes=0-3,2-6")).toEqual({ start: 0, end: 6 }); // coalesced, as answerBlob does
    expect(only("bytes=0-1,4-5")).toBeNull(); // multipart
    expect(only("bytes=10-")).toBeNull(); // 416
    expect(only("items=0-1")).toBeNull(); // ignored: a 200
    expect(only("bytes=2-5", { "if-range": '"abc"' })).toBeNull();
    expect(only("bytes=2-5", { "if-none-match": '"other"' })).toBeNull();
  });
});
