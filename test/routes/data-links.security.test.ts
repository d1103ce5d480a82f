/**
 * Signed links are handed to third parties, so their origin must never come from the request: a
 * `Host: evil.example` must not turn into `http://evil.example/…?signature=…` (issue 10 §2).
 */
import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";

const PUBLIC_URL = "https://cms.example.org";

/** POST createDataLink with a chosen Host header (fetch does not let a test set Host). */
function postWithHost(app: TestApp, host: string, body: unknown): Promise<{ status: number; type: string; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(app.url("/cms/v1.0/createDataLink"), {
      method: "POST",
      headers: { host, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), text }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

async function createText(app: TestApp, name: string): Promise<string> {
  const res = await fetch(
    app.url("/cms/v1.0/createResource"),
    json({ resourceAuthor: "a", resourceBinary: btoa("linked"), resourceMediaType: "text/plain", resourceName: name, resourceTenantId: "links" }),
  );
  expect(res.status).toBe(201);
  return ((await res.json()) as { resourceURI: string }).resourceURI;
}

/** One server without CMS_PUBLIC_URL, one with it. */
let unset: TestApp;
let configured: TestApp;
beforeAll(async () => {
  [unset, configured] = await Promise.all([startTestApp(), startTestApp({ CMS_PUBLIC_URL: PUBLIC_URL })]);
});
afterAll(() => Promise.all([unset.close(), configured.close()]));
afterEach(() => expect([...unset.unhandledErrors(), ...configured.unhandledErrors()]).toEqual([]));

describe("createDataLink without CMS_PUBLIC_URL", () => {
  it("refuses to mint a link rather than build it on the request's Host", async () => {
    const resourceURI = await createText(unset, "a.txt");
    const res = await postWithHost(unset, "evil.example", { resourceURI, expiresIn: 60 });
    expect(res.status).toBe(503);
    expect(res.type).toBe("application/problem+json");
    expect(JSON.parse(res.text)).toMatchObject({ code: "UNAVAILABLE", detail: expect.stringContaining("CMS_PUBLIC_URL") });
    expect(res.text).not.toContain("evil.example");
  });
});

describe("createDataLink with CMS_PUBLIC_URL", () => {
  it("builds the link on the configured origin whatever Host says, and the link serves the content", async () => {
    const app = configured;
    const resourceURI = await createText(app, "b.txt");
    const res = await postWithHost(app, "evil.example", { resourceURI, expiresIn: 60 });
    expect(res.status).toBe(200);
    const link = new URL((JSON.parse(res.text) as { url: string }).url);
    expect(link.origin).toBe(PUBLIC_URL);
    expect(link.pathname).toBe(`/cms/v1.0/getData/${resourceURI}`);
    const served = await fetch(app.url(`${link.pathname}${link.search}`));
    expect(served.status).toBe(200);
    expect(await served.text()).toBe("linked");
  });
});
