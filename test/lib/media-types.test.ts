import { describe, expect, it } from "vitest";
import { isZipMediaType, mediaTypeForPath } from "../../src/lib/media-types.js";

describe("media types", () => {
  it.each([
    ["index.html", "text/html"],
    ["images/Logo.PNG", "image/png"],
    ["js/app.min.js", "text/javascript"],
    ["imsmanifest.xml", "application/xml"],
    ["fonts/a.woff2", "font/woff2"],
    ["README", "application/octet-stream"],
    [".hidden", "application/octet-stream"],
    ["dir.v2/file", "application/octet-stream"],
  ])("%s → %s", (path, type) => expect(mediaTypeForPath(path)).toBe(type));

  // The extension is the uploader's (a zip entry's name): Object.prototype's names are not types.
  it.each(["a.constructor", "a.toString", "a.__proto__", "a.hasOwnProperty"])("%s → application/octet-stream", (path) =>
    expect(mediaTypeForPath(path)).toBe("application/octet-stream"),
  );

  it.each([
    ["application/zip", true],
    ["Application/ZIP; name=x", true],
    ["application/x-zip-compressed", true],
    ["application/octet-stream", false],
    ["application/zip-not", false],
  ])("%s is a package type: %s", (type, zip) => expect(isZipMediaType(type)).toBe(zip));
});
