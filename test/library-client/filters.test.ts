/**
 * The media library's search parameters as the page computes them (src/library-client/filters.ts):
 * relevance sort offered with search text only (the API refuses it without `q`), and the top level
 * `/` as a folder of its own (never recursive: with subfolders it would be every folder).
 */
import { describe, expect, it } from "vitest";
import { type Finding, findingParameters, listOrder } from "../../src/library-client/filters.js";

const none: Finding = { q: "", tags: [], folder: null, recursive: true };

describe("findingParameters", () => {
  it("sorts by relevance when there is text and it is chosen, else newest first", () => {
    expect(findingParameters({ ...none, q: "sun*" }, "relevance")).toEqual({ q: "sun*", sort: "relevance" });
    expect(findingParameters({ ...none, tags: ["sea"] }, "relevance")).toEqual({ tag: ["sea"], sort: "-createdAt" });
    expect(findingParameters({ ...none, q: "sun" }, "asc").sort).toBe("createdAt");
    expect(findingParameters({ ...none, q: "sun" }, "desc").sort).toBe("-createdAt");
  });

  it("asks for the top level alone, never with its subfolders", () => {
    expect(findingParameters({ ...none, folder: "/" }, "desc")).toEqual({ folder: "/", sort: "-createdAt" });
    expect(findingParameters({ ...none, folder: "/photos/" }, "desc")).toEqual({
      folder: "/photos/",
      recursive: "true",
      sort: "-createdAt",
    });
    expect(findingParameters({ ...none, folder: "/photos/", recursive: false }, "desc")).toEqual({
      folder: "/photos/",
      sort: "-createdAt",
    });
  });

  it("keeps listResources newest first when relevance is chosen without a search", () => {
    expect(listOrder("relevance")).toBe("desc");
    expect(listOrder("asc")).toBe("asc");
  });
});
