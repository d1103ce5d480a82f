import { describe, expect, it } from "vitest";
import { answerBlob } from "../../src/http/answer-blob.js";
import type { BlobEntity } from "../../src/http/blob-entity.js";
import { ANSWER_FIELDS, isPlainRequest, plainHeads } from "../../src/http/plain-heads.js";

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
  answerBlob(method, (name) => {
    read.push(name);
    return present[name];
  }, entity);
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
      expect(isPlainRequest((name) => (name === field ? "" : undefined)), field).toBe(false);
    }
    expect(isPlainRequest((name) => (name === "if-range" ? '"abc"' : name === "accept" ? "*/*" : undefined))).toBe(true);
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
