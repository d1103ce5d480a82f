/**
 * Signed links are handed to third parties, so their origin must never come from the request: a
 * `Host: evil.example` must not turn into `http://evil.example/…?signature=…` (issue 10 §2).
 */
import http from "node:http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fakeClock } from "../helpers/fake-clock.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";

const PUBLIC_URL = "https://cms.example.org";

/** POST createDataLink with a chosen Host header (fetch does not let a test set Host). */
function postWithHost(
  app: TestApp,
  host: string,
  body: unknown,
): Promise<{ status: number; type: string; text: string }> {
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
  const res = await app.fetch(
    app.url("/cms/v1.0/createResource"),
    json({
      resourceAuthor: "a",
      resourceBinary: btoa("linked"),
      resourceMediaType: "text/plain",
      resourceName: name,
      resourceTenantId: "links",
    }),
  );
  expect(res.status).toBe(201);
  return ((await res.json()) as { resourceURI: string }).resourceURI;
}

/** One server without CMS_PUBLIC_URL, one with it, on a clock the tests move. */
let unset: TestApp;
let configured: TestApp;
const time = fakeClock();
beforeAll(async () => {
  [unset, configured] = await Promise.all([
    startTestApp(),
    startTestApp({ CMS_PUBLIC_URL: PUBLIC_URL }, { clock: time.clock }),
  ]);
});
afterAll(() => Promise.all([unset.close(), configured.close()]));
afterEach(() => expect([...unset.unhandledErrors(), ...configured.unhandledErrors()]).toEqual([]));

describe("createDataLink without CMS_PUBLIC_URL", () => {
  it("refuses to mint a link rather than build it on the request's Host", async () => {
    const resourceURI = await createText(unset, "a.txt");
    const res = await postWithHost(unset, "evil.example", { resourceURI, expiresIn: 60 });
    expect(res.status).toBe(503);
    expect(res.type).toBe("application/problem+json");
    expect(JSON.parse(res.text)).toMatchObject({
      code: "UNAVAILABLE",
      detail: expect.stringContaining("CMS_PUBLIC_URL"),
    });
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
    const served = await app.fetch(app.url(`${link.pathname}${link.search}`));
    expect(served.status).toBe(200);
    expect(await served.text()).toBe("linked");
  });
});

describe("signed link expiry", () => {
  it("a link is signed and refused by the app's clock: it works until that clock reaches its expiry, whatever the real time", async () => {
    const app = configured;
    const resourceURI = await createText(app, "c.txt");
    const minted = await app.fetch(app.url("/cms/v1.0/createDataLink"), json({ resourceURI, expiresIn: 60 }));
    expect(minted.status).toBe(200);
    const { url, expires } = (await minted.json()) as { url: string; expires: string };
    expect(Date.parse(expires)).toBe(Math.floor(time.nowMs() / 1000) * 1000 + 60_000);
    const link = new URL(url);
    const get = () => app.fetch(app.url(`${link.pathname}${link.search}`));
    expect((await get()).status).toBe(200);
    time.advance(59_000 - (time.nowMs() % 1000)); // one second before expiry by the app's clock
    expect((await get()).status).toBe(200);
    time.advance(1_000);
    const refused = await get();
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "FORBIDDEN" });
  });
});
