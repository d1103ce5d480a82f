/**
 * The media library's edits as the page computes them (src/library-client/describe.ts, bulk.ts):
 * the merge patch that turns the stored metadata into the edited JSON (checked by applying it with
 * the server's own mergePatch), tags as typed, bulk tag edits, folders as typed.
 */
import { describe, expect, it } from "vitest";
import { parseTagEdits } from "../../src/library-client/bulk.js";
import { normaliseFolder, parseTags, replacingPatch, tagsAfter } from "../../src/library-client/describe.js";
import { mergePatch } from "../../src/services/descriptions.js";

describe("replacingPatch", () => {
  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ["a key removed", { a: 1, b: 2 }, { a: 1 }],
    ["a key added and one changed", { a: 1 }, { a: 2, c: "x" }],
    ["a nested key removed", { by: { name: "Ann", role: "x" } }, { by: { name: "Ann" } }],
    ["an object replaced by a scalar and back", { a: { b: 1 }, c: 3 }, { a: 5, c: { d: [1, 2] } }],
    ["arrays replaced whole", { list: [1, 2, 3] }, { list: [3] }],
    ["everything removed", { a: 1, b: { c: 2 } }, {}],
  ];
  for (const [name, before, after] of cases) {
    it(`turns the stored object into the edited one: ${name}`, () => {
      expect(mergePatch(before, replacingPatch(before, after))).toEqual(after);
    });
  }

  it("is empty when nothing changed (no request is sent)", () => {
    expect(replacingPatch({ a: { b: [1] }, c: "x" }, { c: "x", a: { b: [1] } })).toEqual({});
  });
});

describe("tags and folders as typed", () => {
  it("reads comma-separated tags, trimmed, the first spelling of each", () => {
    expect(parseTags(" work, minutes,, Work ,<b>x</b>")).toEqual(["work", "minutes", "<b>x</b>"]);
    expect(parseTags("  ")).toEqual([]);
  });

  it("adds and removes tags case-insensitively", () => {
    expect(tagsAfter(["Boats", "sea"], ["featured", "SEA"], ["boats"])).toEqual(["sea", "featured"]);
  });

  it("reads +add -remove bulk edits, a bare word adding", () => {
    expect(parseTagEdits("+featured -boats new, -old + -")).toEqual({
      add: ["featured", "new"],
      remove: ["boats", "old"],
    });
  });

  it("writes a folder as the API does, empty or / meaning unset", () => {
    expect(normaliseFolder("photos/2026")).toBe("/photos/2026/");
    expect(normaliseFolder(" /docs/ ")).toBe("/docs/");
    expect(normaliseFolder("")).toBeNull();
    expect(normaliseFolder("/")).toBeNull();
  });
});
