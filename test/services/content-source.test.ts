import { describe, expect, it } from "vitest";
import { ProblemError } from "../../src/problems.js";
import { toContentSource } from "../../src/services/content-source.js";

describe("toContentSource", () => {
  it("maps a URI to a download, base64 to decoded bytes, and neither to no new content", () => {
    expect(toContentSource({ resourceExternalURI: "https://example.org/x" }, 10)).toEqual({
      kind: "uri",
      uri: "https://example.org/x",
    });
    expect(toContentSource({ resourceBinary: "AAEC" }, 10)).toEqual({
      kind: "bytes",
      bytes: new Uint8Array([0, 1, 2]),
      pointer: "/body/resourceBinary",
    });
    expect(toContentSource({}, 10)).toBeUndefined();
  });

  it("refuses inline content past the limit with 413 before decoding it", () => {
    expect(toContentSource({ resourceBinary: "AAECAw==" }, 4)).toMatchObject({ kind: "bytes" });
    const err = (() => {
      try {
        toContentSource({ resourceBinary: "AAECAwQ=" }, 4);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      status: 413,
      errors: [{ pointer: "/body/resourceBinary" }],
    });
  });
});
