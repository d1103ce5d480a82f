import { describe, expect, it } from "vitest";
import { contentPolicy, treatmentOf } from "../../src/http/content-policy.js";

const plain = { packageFile: false, apiOriginOnly: false };

describe("the media type table", () => {
  it.each([
    ["image/png", "inline"],
    ["IMAGE/JPEG", "inline"],
    ["video/mp4", "inline"],
    ["audio/ogg; codecs=opus", "inline"],
    ["font/woff2", "inline"],
    ["text/css; charset=utf-8", "inline"],
    ["text/javascript", "inline"],
    ["application/json", "inline"],
    ["application/pdf", "inline"],
    ["text/plain", "inline"],
    ["text/html", "active"],
    ["Text/HTML; charset=UTF-8", "active"],
    ["application/xhtml+xml", "active"],
    ["image/svg+xml", "active"],
    ["application/xml", "active"],
    ["text/xml", "active"],
    ["application/rss+xml", "active"],
    ["application/octet-stream", "attachment"],
    ["application/x-shockwave-flash", "attachment"],
    ["message/rfc822", "attachment"],
    ["multipart/related", "attachment"],
    ["image/x-unknown", "attachment"],
    // Fetch's "extract a MIME type" takes the last of a comma list: a browser would see text/html.
    ["image/png, text/html", "attachment"],
    ["image/png; x=a,text/html", "attachment"],
    ["text/html\u0000", "attachment"],
    ["", "attachment"],
  ])("%s → %s", (type, treatment) => expect(treatmentOf(type)).toBe(treatment));
});

describe("contentPolicy", () => {
  const sandboxTokens = (csp: string) =>
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .find(([name]) => name === "sandbox");

  it("sandboxes everything but PDFs, and never allows same-origin", () => {
    for (const mediaType of ["image/png", "text/plain", "text/html", "image/svg+xml", "application/zip", "video/mp4"]) {
      for (const packageFile of [false, true]) {
        const { csp } = contentPolicy({ mediaType, packageFile, apiOriginOnly: false });
        const sandbox = sandboxTokens(csp);
        expect(sandbox, `${mediaType} ${packageFile}`).toBeDefined();
        expect(sandbox).not.toContain("allow-same-origin");
      }
    }
  });

  it("lets only a package's active files run scripts", () => {
    expect(sandboxTokens(contentPolicy({ ...plain, mediaType: "text/html" }).csp)).toEqual(["sandbox"]);
    expect(sandboxTokens(contentPolicy({ ...plain, mediaType: "text/html", packageFile: true }).csp)).toContain(
      "allow-scripts",
    );
    expect(sandboxTokens(contentPolicy({ ...plain, mediaType: "image/png", packageFile: true }).csp)).toEqual([
      "sandbox",
    ]);
  });

  it("keeps PDFs viewable: no sandbox, no default-src, but no script", () => {
    const { csp, disposition } = contentPolicy({ ...plain, mediaType: "application/pdf" });
    expect(disposition).toBe("inline");
    expect(csp).toBe("script-src 'none'");
  });

  it("sends active content as an attachment on the API origin when a content origin exists", () => {
    expect(contentPolicy({ ...plain, mediaType: "text/html", apiOriginOnly: true }).disposition).toBe("attachment");
    expect(
      contentPolicy({ ...plain, mediaType: "image/svg+xml", packageFile: true, apiOriginOnly: true }),
    ).toMatchObject({
      disposition: "attachment",
      csp: expect.not.stringContaining("allow-scripts"),
    });
    expect(contentPolicy({ ...plain, mediaType: "image/png", apiOriginOnly: true }).disposition).toBe("inline");
    expect(contentPolicy({ ...plain, mediaType: "text/html" }).disposition).toBe("inline");
  });

  it("downloads unknown types, and serves a malformed one as application/octet-stream", () => {
    expect(contentPolicy({ ...plain, mediaType: "application/x-msdownload" })).toMatchObject({
      disposition: "attachment",
      contentType: "application/x-msdownload",
    });
    expect(contentPolicy({ ...plain, mediaType: "image/png, text/html" })).toMatchObject({
      disposition: "attachment",
      contentType: "application/octet-stream",
    });
  });
});
