/**
 * The pages' shared browser safety (src/routes/page-policy.ts): the explorer's and the library's
 * CSP, pinned as they were before the two pages shared one builder, and JSON that stays inside its
 * <script> element.
 */
import { describe, expect, it } from "vitest";
import { explorerPage } from "../../src/routes/explorer/page.js";
import { libraryPage } from "../../src/routes/library/page.js";
import { safeJson } from "../../src/routes/page-policy.js";

const auth = {
  authorizationUrl: "https://idp.example/auth",
  tokenUrl: "https://idp.example:8443/token",
  logoutUrl: "https://idp.example/logout",
  clientId: "cms",
};

describe("the pages' Content-Security-Policy", () => {
  it("explorer: its hashed start-up script, blob: previews, the token endpoint's origin", () => {
    expect(explorerPage({ specUrl: "/openapi.json", auth }, "/vendor").csp).toBe(
      "default-src 'none'; script-src 'self' 'sha256-mpRzucJnOQW0rY0AxHO5axaqgQTz/1jkz2gZCAyDPL4='; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; media-src blob:; object-src blob:; frame-src blob:; connect-src 'self' https://idp.example:8443; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
  });

  it("library: no inline script, its hashed stylesheet, previews from the content origin", () => {
    const settings = {
      apiPrefix: "/cms/v1.0",
      tenantClaim: "tenants",
      maxLinkSeconds: 3600,
      previewPreset: "preview",
      roles: null,
    };
    expect(libraryPage({ settings, auth, contentOrigins: ["https://content.example"] }).csp).toBe(
      "default-src 'none'; script-src 'self'; style-src 'sha256-Sh7mX0MV38fFHyqRuwkKPwumzf09bG2Bp/5vytvgJcQ='; img-src 'self' https://content.example data:; media-src 'self' https://content.example; frame-src 'self' https://content.example; connect-src 'self' https://idp.example:8443; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(libraryPage({ settings, auth: null, contentOrigins: [] }).csp).toContain("connect-src 'self'; ");
  });
});

describe("safeJson", () => {
  it("cannot close its <script> element or open a comment", () => {
    const json = safeJson({ name: "</script><!--" });
    expect(json).not.toContain("<");
    expect(JSON.parse(json)).toEqual({ name: "</script><!--" });
  });
});
