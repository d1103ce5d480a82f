/**
 * The typed client and versioned URLs (issue 28 §1): versionedURI comes back from create and
 * update, downloads by it, and signed links can be made for it (they sign the version too).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCmsClient } from "../../src/client/index.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp;
beforeAll(async () => {
  // A fixed loopback port gives the server its CMS_PUBLIC_URL, which signed links need.
  app = await startTestApp({}, { ownPublicUrl: true });
});
afterAll(() => app.close());

describe("versioned URLs in the typed client", () => {
  it("downloads by versionedURI and signs links for it", async () => {
    const client = createCmsClient({ baseUrl: app.baseUrl });
    const created = await client.createResource({
      resourceAuthor: "A",
      resourceMediaType: "text/plain",
      resourceName: "c.txt",
      resourceTenantId: "clients",
      resourceBinary: btoa("client bytes"),
    });
    expect(created.versionedURI).toMatch(/^.+\/c\.txt\?v=[0-9a-f]{16}$/);
    const dl = await client.download(created.versionedURI);
    expect(await new Response(dl.body).text()).toBe("client bytes");

    const link = await client.signedLink(created.versionedURI, 120);
    expect(link.url).toContain(`/c.txt?v=${created.sha256.slice(0, 16)}&expires=`);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("client bytes");
    // A cache may keep it no longer than the link lives.
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(res.headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThan(100);
    expect(maxAge).toBeLessThanOrEqual(120);
    // The signature covers the version: another v, or none, is refused.
    const other = link.url.replace(/v=[0-9a-f]{16}/, `v=${"0".repeat(16)}`);
    expect((await fetch(other)).status).toBe(403);
    expect((await fetch(link.url.replace(/v=[0-9a-f]{16}&/, ""))).status).toBe(403);
  });
});
