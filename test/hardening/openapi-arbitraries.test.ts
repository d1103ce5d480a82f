import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asText } from "./openapi-arbitraries.js";

// The fuzz test's generators are code too: a value they cannot turn into a request fails CI
// without telling anything about the service (CI run of stop 18: "Cannot convert object to
// primitive value" from a null-prototype object put into a query string).
describe("asText (generated values into query strings and form fields)", () => {
  it("writes a null-prototype object as JSON instead of throwing", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(asText(bare)).toBe('{"a":1}');
  });

  it("turns every value fast-check's object and JSON generators make into text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.object({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), fc.array(fc.string())), (v) => {
        expect(typeof asText(v)).toBe("string");
      }),
      { numRuns: 5000 },
    );
  });

  it("keeps scalars as String() writes them", () => {
    expect([asText(null), asText(true), asText(12.5), asText("x")]).toEqual(["null", "true", "12.5", "x"]);
  });
});
