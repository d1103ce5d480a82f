import { describe, expect, it } from "vitest";
import { parseUploadMetadata } from "../../src/http/tus-headers.js";
import { ProblemError } from "../../src/problems.js";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("parseUploadMetadata", () => {
  // Keys are the client's: names Object.prototype carries are keys like any other.
  it.each(["toString", "constructor", "hasOwnProperty", "__proto__", "valueOf"])(
    "takes %s as an ordinary key",
    (key) => {
      const parsed = parseUploadMetadata(`filename ${b64("a.txt")},${key} ${b64("x")}`);
      expect(parsed.get("filename")).toBe("a.txt");
      expect(parsed.get(key)).toBe("x");
      expect(parsed.size).toBe(2);
    },
  );

  it("still refuses a key given twice, naming it", () => {
    let thrown: unknown;
    try {
      parseUploadMetadata(`toString ${b64("a")},toString ${b64("b")}`);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    expect((thrown as ProblemError).message).toContain("key toString is given twice");
  });

  it("a key without a value means the empty string", () => {
    expect([...parseUploadMetadata(`is_confidential,filename ${b64("b")}`)]).toEqual([
      ["is_confidential", ""],
      ["filename", "b"],
    ]);
  });
});
