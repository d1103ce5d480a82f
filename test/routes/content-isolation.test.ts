/**
 * Stored content never runs script in the API's origin: every path that serves bytes sends the
 * policy of src/http/content-policy.ts (a `sandbox` CSP, nosniff, the right disposition), and with
 * CMS_CONTENT_ORIGIN active content is rendered only on that origin. Real server on 127.0.0.1;
 * the content origin is the same server under another Host (as a second hostname would be).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { API, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";
import { getWithHost } from "../helpers/host-request.js";
import { scormZip } from "../helpers/packages.js";
import { bindLoopback } from "../helpers/test-app.js";

const HOSTILE_HTML = "<html><script>parent.stolen = sessionStorage.getItem('cms.explorer.session')</script></html>";
const HOSTILE_SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>';

const sandboxOf = (csp: string | null) =>
  (csp ?? "")
    .split(";")
    .map((d) => d.trim().split(/\s+/))
    .find(([name]) => name === "sandbox");

/** Asserts the answer may not run script in our origin, and how it is disposed. */
function expectInert(res: Response, disposition: "inline" | "attachment", what: string) {
  expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(sandboxOf(res.headers.get("content-security-policy")), what).toEqual(["sandbox"]);
  expect(res.headers.get("content-disposition"), what).toMatch(new RegExp(`^${disposition}\\b`));
}

describe("content isolation on every serving path", async () => {
  const bound = await bindLoopback();
  const t = useCmsApp("isolate", { CMS_PORT: String(bound.port), CMS_PUBLIC_URL: bound.url }, { listenOn: bound });
  const create = (name: string, mediaType: string, content: string | Uint8Array) =>
    t.cms.create({ resourceName: name, resourceMediaType: mediaType }, content);

  let html: ResourceDto;
  let svg: ResourceDto;
  beforeAll(async () => {
    html = await create("report.html", "text/html; charset=utf-8", HOSTILE_HTML);
    svg = await create("logo.svg", "image/svg+xml", HOSTILE_SVG);
    // A second revision, so getRevisionData has history to serve.
    const lock = await t.cms.lock(html.resourceUID);
    expect(
      (
        await t.cms.post("updateResource", {
          ...lock,
          resourceBinary: Buffer.from(HOSTILE_HTML + " ").toString("base64"),
        })
      ).status,
    ).toBe(200);
  });

  const paths = (r: ResourceDto): [string, () => Promise<Response>][] => [
    ["GET getData", () => t.cms.get(`getData/${r.resourceURI}`)],
    ["HEAD getData", () => t.app.fetch(t.app.url(`${API}/getData/${r.resourceURI}`), { method: "HEAD" })],
    ["GET getData, one range", () => t.cms.get(`getData/${r.resourceURI}`, { range: "bytes=0-9" })],
    ["POST getData by UID", () => t.cms.post("getData", { resourceUID: r.resourceUID })],
    ["POST getData by URI", () => t.cms.post("getData", { resourceURI: r.resourceURI })],
    ["getMultiPartData", () => t.cms.get(`getMultiPartData/${r.resourceURI}`)],
    ["getDataUuid", () => t.cms.get(`getDataUuid/${r.resourceUID}`)],
    ["getRevisionData", () => t.cms.get(`getRevisionData/${r.resourceUID}/1`)],
    [
      "a signed link",
      async () => {
        const link = (await (
          await t.cms.post("createDataLink", { resourceURI: r.resourceURI, expiresIn: 60 })
        ).json()) as { url: string };
        return fetch(link.url);
      },
    ],
  ];

  it("sandboxes stored HTML without scripts on every path, and the bytes are still the stored ones", async () => {
    for (const [what, call] of paths(html)) {
      const res = await call();
      expect([200, 206], what).toContain(res.status);
      expectInert(res, "inline", what);
      const body = await res.text();
      if (what.startsWith("GET getData, one")) expect(body).toBe(HOSTILE_HTML.slice(0, 10));
      else if (!what.startsWith("HEAD")) expect(body.startsWith(HOSTILE_HTML), what).toBe(true);
    }
  });

  it("sandboxes stored SVG without scripts on every path", async () => {
    for (const [what, call] of paths(svg).filter(([w]) => w !== "getRevisionData")) {
      const res = await call();
      expect([200, 206], what).toContain(res.status);
      expectInert(res, "inline", what);
      await res.arrayBuffer();
    }
  });

  it("keeps the policy on a multipart range answer", async () => {
    const res = await t.cms.get(`getData/${html.resourceURI}`, { range: "bytes=0-1,4-5" });
    expect(res.status).toBe(206);
    expectInert(res, "inline", "multipart");
    await res.arrayBuffer();
  });

  it("lets a package's start page run scripts, in an opaque origin; its other files stay inert", async () => {
    const start = await t.cms.create(
      { resourceMediaType: "application/zip", resourceName: "lesson.zip" },
      await scormZip(),
    );
    const page = await t.cms.get(`getData/${start.resourceURI}`);
    const sandbox = sandboxOf(page.headers.get("content-security-policy"));
    expect(sandbox).toContain("allow-scripts");
    expect(sandbox).not.toContain("allow-same-origin");
    expect(page.headers.get("content-disposition")).toMatch(/^inline/);
    await page.text();
    const script = await t.cms.get(`getData/${start.resourceURI.replace("index.html", "js/app.js")}`);
    expectInert(script, "inline", "package script");
    expect(script.headers.get("content-type")).toBe("text/javascript");
    expect(script.headers.get("access-control-allow-origin")).toBe("*"); // module scripts from the opaque origin
    await script.text();
  });

  it("serves images inline and inert, PDFs inline with no sandbox, unknown types as attachments", async () => {
    const png = await create("logo.png", "image/png", new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    expectInert(await t.cms.get(`getData/${png.resourceURI}`), "inline", "png");
    const pdf = await create("doc.pdf", "application/pdf", "%PDF-1.4\n");
    const pdfRes = await t.cms.get(`getData/${pdf.resourceURI}`);
    expect(pdfRes.headers.get("content-security-policy")).toBe("script-src 'none'");
    expect(pdfRes.headers.get("content-disposition")).toMatch(/^inline/);
    expect(pdfRes.headers.get("x-content-type-options")).toBe("nosniff");
    const exe = await create("setup.exe", "application/x-msdownload", "MZ");
    expectInert(await t.cms.get(`getData/${exe.resourceURI}`), "attachment", "exe");
  });
});

describe("with CMS_CONTENT_ORIGIN", async () => {
  const bound = await bindLoopback();
  const contentOrigin = `http://content.localhost:${bound.port}`;
  const t = useCmsApp(
    "split",
    { CMS_PORT: String(bound.port), CMS_CONTENT_ORIGIN: contentOrigin },
    { listenOn: bound },
  );

  it("renders active content only on the content origin; the API origin sends it as an attachment", async () => {
    const html = await t.cms.create({ resourceName: "page.html", resourceMediaType: "text/html" }, HOSTILE_HTML);
    const path = t.app.url(`${API}/getData/${html.resourceURI}`);
    const onApi = await fetch(path);
    expectInert(onApi, "attachment", "API origin");
    expect(await onApi.text()).toBe(HOSTILE_HTML); // API clients still get the bytes
    const onContent = await getWithHost(path, `content.localhost:${bound.port}`);
    expect(onContent.status).toBe(200);
    expect(onContent.headers["content-disposition"]).toMatch(/^inline/);
    expect(onContent.headers["content-security-policy"]).toMatch(/^sandbox;/);
    // Passive content is rendered on both.
    const png = await t.cms.create({ resourceName: "a.png", resourceMediaType: "image/png" }, "png");
    expect((await t.cms.get(`getData/${png.resourceURI}`)).headers.get("content-disposition")).toMatch(/^inline/);
  });

  it("mints signed links on the content origin", async () => {
    const html = await t.cms.create({ resourceName: "linked.html", resourceMediaType: "text/html" }, HOSTILE_HTML);
    const res = await t.cms.post("createDataLink", { resourceURI: html.resourceURI, expiresIn: 60 });
    const { url } = (await res.json()) as { url: string };
    expect(new URL(url).origin).toBe(contentOrigin);
    const signed = new URL(url);
    const onContent = await getWithHost(t.app.url(signed.pathname + signed.search), signed.host);
    expect(onContent.status).toBe(200);
    expect(onContent.headers["content-disposition"]).toMatch(/^inline/);
  });
});
