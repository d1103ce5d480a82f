/**
 * Stored content in a real browser (Debian's Chromium via playwright-core): an admin logged into the
 * explorer keeps a token in sessionStorage; HTML and SVG a creator uploaded must not be able to read
 * it — opened in the same tab through a signed link, or framed by a page of another loopback origin.
 * Ordinary content keeps working: a package's start page runs its script and loads its relative
 * files (in an opaque origin), a PNG renders in <img>, a PDF opens in the viewer.
 * Everything is on 127.0.0.1; a hostile script reports what it could read in document.title.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningIdp, startIdp } from "../../scripts/idp/server.js";
import { launchChromium, logIntoExplorer } from "../helpers/browser.js";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";
import { buildZip } from "../helpers/zip-writer.js";
import { bindLoopback, startTestApp, type TestApp } from "../helpers/test-app.js";

const SESSION_KEY = "cms.explorer.session";

/** Puts what it could read of the explorer's session into the title: "ran:<token or null>". */
const STEAL = `let v; try { v = sessionStorage.getItem("${SESSION_KEY}") } catch (e) { v = "denied " + e.name } document.title = "ran:" + v;`;
const HOSTILE_HTML = `<!doctype html><html><head><title>report</title></head><body><p>Quarterly report</p><script>${STEAL}</script></body></html>`;
const HOSTILE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><title>logo</title><script>${STEAL}</script></svg>`;
/** Another loopback origin: serves the HTML pages a test puts, as text/html with no CSP. */
async function startPages(): Promise<{
  url(name: string): string;
  put(name: string, html: string): string;
  close(): Promise<void>;
}> {
  const pages = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const html = pages.get((req.url ?? "").slice(1));
    if (html === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (name) => `${base}/${name}`,
    put(name, html) {
      pages.set(name, html);
      return `${base}/${name}`;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let idp: RunningIdp;
let app: TestApp;
let pages: Awaited<ReturnType<typeof startPages>>;
let browser: Browser;
let creatorToken: string;
const external: string[] = [];

beforeAll(async () => {
  // Chromium and the page server start while the IdP and the app do (each waited for in turn, they
  // added up to seconds on a loaded machine).
  const stack = (async () => {
    // The app's socket is bound first (port 0), so the IdP can name its origin: no port probed.
    const bound = await bindLoopback();
    idp = await startIdp({ port: 0, appOrigins: [bound.url], log: () => {} });
    // Public read: a package page's relative files are fetched with no token and no signature.
    app = await startTestApp(
      {
        CMS_PORT: String(bound.port),
        CMS_PUBLIC_URL: bound.url,
        CMS_AUTH_ENABLED: "true",
        CMS_AUTH_ISSUER: idp.issuer,
        CMS_PUBLIC_READ: "true",
      },
      { listenOn: bound },
    );
    const res = await fetch(`${idp.issuer}/protocol/openid-connect/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: "cms-server",
        client_secret: "cms-server-dev-secret",
        username: "cms-creator",
        password: "cms-creator",
        grant_type: "password",
      }),
    });
    creatorToken = ((await res.json()) as { access_token: string }).access_token;
  })();
  // Each kept as it comes, so afterAll closes what started even if another part failed.
  await Promise.all([
    startPages().then((started) => (pages = started)),
    launchChromium().then((started) => (browser = started)),
    stack,
  ]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await app?.close();
  await idp?.close();
});

const api = (verb: string, body: unknown) =>
  fetch(app.url(`/cms/v1.0/${verb}`), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${creatorToken}` },
    body: JSON.stringify(body),
  });

/** Creates a resource as the creator; returns its resourceURI. */
async function create(name: string, mediaType: string, content: string | Uint8Array): Promise<string> {
  const res = await api("createResource", {
    resourceAuthor: "creator",
    resourceName: name,
    resourceMediaType: mediaType,
    resourceTenantId: "browser",
    resourceBinary: Buffer.from(content).toString("base64"),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { resourceURI: string }).resourceURI;
}

async function signedLink(resourceURI: string): Promise<string> {
  const res = await api("createDataLink", { resourceURI, expiresIn: 600 });
  expect(res.status).toBe(200);
  return ((await res.json()) as { url: string }).url;
}

async function newPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.on("request", (req) => {
    const host = new URL(req.url()).hostname;
    // chrome:// and chrome-extension:// are the PDF viewer's own files.
    if (/^(https?|wss?):/.test(req.url()) && host !== "127.0.0.1" && host !== "localhost") external.push(req.url());
  });
  return page;
}

/** An admin logged into the explorer in this tab: its token is in sessionStorage. */
async function adminInExplorer(): Promise<Page> {
  const page = await newPage();
  await logIntoExplorer(page, app.url("/swagger-ui.html"), idp.issuer, "cms-admin");
  expect(await page.evaluate((key) => sessionStorage.getItem(key), SESSION_KEY)).toContain("accessToken");
  return page;
}

/**
 * The title once the document has loaded. Its scripts (if any) had their chance by then: the hostile
 * ones are inline and synchronous, and "load" fires after they ran (the control test shows it).
 */
async function settledTitle(target: Page | Frame): Promise<string> {
  await target.waitForLoadState("load");
  return target.title();
}

/** What Chromium's PDF viewer (an extension frame) shows: the document, its error dialog, or nothing at all. */
async function pdfViewerState(page: Page): Promise<"rendered" | "error" | "no viewer"> {
  const isViewer = (f: Frame) => f.url().startsWith("chrome-extension://");
  // The viewer's frame, already there or when it navigates to the extension (a bound, not a wait).
  const navigated = page
    .waitForEvent("framenavigated", { predicate: isViewer, timeout: 30_000 })
    .catch(() => undefined);
  const frame = page.frames().find(isViewer) ?? (await navigated);
  if (!frame) return "no viewer";
  // The viewer says when it is done: its load state leaves "loading" for "success" (the toolbar
  // counts the pages) or "failed" (the error dialog shows). Awaited, not a fixed wait for the dialog.
  const outcome = await frame.waitForFunction(
    () => {
      const viewer = document.querySelector("pdf-viewer") as (Element & { loadState_?: string }) | null;
      const toolbar = viewer?.shadowRoot?.querySelector("viewer-toolbar") as { docLength?: number } | null;
      if (viewer?.shadowRoot?.querySelector("viewer-error-dialog") || viewer?.loadState_ === "failed") return "error";
      if (viewer?.loadState_ === "success" || (toolbar?.docLength ?? 0) > 0) return "rendered";
      return false;
    },
    undefined,
    { timeout: 30_000 },
  );
  return (await outcome.jsonValue()) as "rendered" | "error";
}

describe("stored HTML and SVG in the browser", () => {
  // One tab, logged in once: sessionStorage belongs to the tab and outlives its navigations.
  let adminTab: Page;
  beforeAll(async () => {
    adminTab = await adminInExplorer();
  }, 60_000);
  afterAll(async () => {
    await adminTab?.context().close();
  });

  /**
   * The admin's tab still holds the explorer's session (nothing took it away): read on a light page
   * of the explorer's origin (sessionStorage is the tab's, per origin), not through Swagger UI's
   * 1.7 MB bundle; the explorer itself shows the session once, after all of them (below).
   */
  async function expectStillLoggedIn() {
    await adminTab.goto(app.url("/openapi.json"));
    expect(await adminTab.evaluate((key) => sessionStorage.getItem(key), SESSION_KEY)).toContain("accessToken");
  }

  it("runs the hostile script where nothing protects it (the control: the test can fail)", async () => {
    const page = await newPage();
    await page.goto(pages.put("control.html", HOSTILE_HTML));
    expect(await settledTitle(page)).toBe("ran:null");
    await page.context().close();
  }, 30_000);

  it.each([
    ["HTML", "report.html", "text/html", HOSTILE_HTML, "report"],
    ["SVG", "logo.svg", "image/svg+xml", HOSTILE_SVG, "logo"],
  ])(
    "cannot read the explorer's token when %s is opened by a signed link in the same tab",
    async (_what, name, type, content, title) => {
      const link = await signedLink(await create(name, type, content));
      await adminTab.goto(link);
      expect(adminTab.url()).toBe(link);
      // Rendered (not downloaded), but its script never ran.
      expect(await settledTitle(adminTab)).toBe(title);
      await expectStillLoggedIn();
    },
    60_000,
  );

  it("runs no script when another loopback origin frames it", async () => {
    const link = await signedLink(await create("framed.html", "text/html", HOSTILE_HTML));
    await adminTab.goto(
      pages.put("framer.html", `<!doctype html><title>framer</title><iframe src="${link}"></iframe>`),
    );
    const frame = adminTab.frames().find((f) => f.url() === link) as Frame;
    expect(frame).toBeDefined();
    expect(await settledTitle(frame)).toBe("report");
    await expectStillLoggedIn();
  }, 60_000);

  it("leaves the explorer showing the admin's session after the hostile pages", async () => {
    await adminTab.goto(app.url("/swagger-ui.html"));
    await adminTab.waitForSelector("#cms-session.on", { timeout: 60_000 });
    expect(await adminTab.evaluate((key) => sessionStorage.getItem(key), SESSION_KEY)).toContain("accessToken");
  }, 60_000);

  it.each([
    ["image/png", "fake.png"],
    ["text/plain", "fake.txt"],
    ["application/pdf", "fake.pdf"],
  ])(
    "does not run HTML bytes declared as %s",
    async (type, name) => {
      const uri = await create(name, type, HOSTILE_HTML);
      const page = await newPage();
      await page.goto(app.url(`/cms/v1.0/getData/${uri}`));
      expect(await settledTitle(page)).not.toMatch(/^ran:/);
      // The PDF viewer's error shows the check below (a real PDF renders) tells the two apart.
      if (type === "application/pdf") expect(await pdfViewerState(page)).toBe("error");
      await page.context().close();
    },
    30_000,
  );
});

describe("ordinary content keeps working", () => {
  it("runs a package start page's script in an opaque origin, loading its relative files", async () => {
    const zip = await buildZip([
      { name: "info.json", data: JSON.stringify({ startpage: "index.html" }) },
      {
        name: "index.html",
        data: '<!doctype html><title>lesson</title><link rel="stylesheet" href="css/lesson.css"><img id="logo" src="images/logo.png"><script src="js/app.js"></script>',
      },
      { name: "css/lesson.css", data: "body { color: rgb(1, 2, 3) }" },
      { name: "images/logo.png", data: PNG_1x1, method: 0 },
      { name: "data/lesson.json", data: JSON.stringify({ pages: 3 }) },
      {
        name: "js/app.js",
        data: `window.addEventListener("load", async () => {
  let storage; try { storage = String(sessionStorage.getItem("${SESSION_KEY}")) } catch (e) { storage = "denied" }
  const lesson = await fetch("data/lesson.json").then((r) => r.json(), (e) => ({ error: String(e) }));
  const logo = document.getElementById("logo").naturalWidth;
  const color = getComputedStyle(document.body).color;
  document.title = JSON.stringify({ storage, origin: self.origin, pages: lesson.pages, logo, color });
});`,
      },
    ]);
    const start = await create("lesson.zip", "application/zip", zip);
    const page = await newPage();
    await page.goto(app.url("/openapi.json"));
    await page.evaluate((key) => sessionStorage.setItem(key, '{"accessToken":"secret"}'), SESSION_KEY);
    await page.goto(app.url(`/cms/v1.0/getData/${start}`));
    await page.waitForFunction(() => document.title.startsWith("{"), undefined, { timeout: 30_000 });
    expect(JSON.parse(await page.title())).toEqual({
      storage: "denied",
      origin: "null",
      pages: 3,
      logo: 1,
      color: "rgb(1, 2, 3)",
    });
    await page.context().close();
  }, 60_000);

  it("renders a stored PNG and SVG in <img> of another origin", async () => {
    const png = app.url(`/cms/v1.0/getData/${await create("pixel.png", "image/png", PNG_1x1)}`);
    const svg = app.url(`/cms/v1.0/getData/${await create("ten.svg", "image/svg+xml", HOSTILE_SVG)}`);
    const page = await newPage();
    await page.goto(pages.put("img.html", `<!doctype html><img id="png" src="${png}"><img id="svg" src="${svg}">`));
    await page.waitForFunction(() => [...document.images].every((image) => image.complete));
    expect(await page.evaluate(() => [...document.images].map((image) => image.naturalWidth))).toEqual([1, 10]);
    await page.context().close();
  }, 30_000);

  it("plays and seeks stored audio, in an <audio> of another origin and opened on its own", async () => {
    const audio = app.url(`/cms/v1.0/getData/${await create("tone.wav", "audio/wav", toneWav(20))}`);
    const page = await newPage();
    const ranges: string[] = [];
    page.on("request", (req) => {
      if (req.url() === audio && req.headers().range) ranges.push(req.headers().range as string);
    });
    await page.goto(pages.put("audio.html", `<!doctype html><audio id="a" preload="auto" src="${audio}"></audio>`));
    const seek = () =>
      new Promise<number>((resolve, reject) => {
        const media = document.querySelector("audio, video") as HTMLMediaElement;
        const go = () => {
          media.addEventListener("seeked", () => resolve(media.currentTime), { once: true });
          media.currentTime = 17;
        };
        media.addEventListener("error", () => reject(new Error(`media error ${media.error?.code}`)), { once: true });
        if (media.readyState >= 1) go();
        else media.addEventListener("loadedmetadata", go, { once: true });
      });
    expect(await page.evaluate(seek)).toBeCloseTo(17, 0);
    expect(ranges.length).toBeGreaterThan(0); // the browser fetched it by byte ranges
    // Opened on its own, Chromium wraps it in a media document: the sandbox CSP must not stop it.
    // Scripting is off in there (no allow-scripts), so no event fires in the page: poll instead.
    await page.goto(audio);
    const mediaState = () => {
      const media = document.querySelector("video, audio") as HTMLMediaElement;
      // The media document autoplays (if allowed), so the position may have moved on a little.
      return {
        ready: media.readyState,
        seeking: media.seeking,
        atTarget: media.currentTime >= 17 && media.currentTime < 19,
      };
    };
    await expect.poll(async () => (await page.evaluate(mediaState)).ready).toBeGreaterThanOrEqual(1);
    await page.evaluate(() => {
      (document.querySelector("video, audio") as HTMLMediaElement).currentTime = 17;
    });
    await expect.poll(async () => page.evaluate(mediaState)).toMatchObject({ seeking: false, atTarget: true });
    await page.context().close();
  }, 30_000);

  it("lets another origin fetch stored CSS and JavaScript with CORS", async () => {
    const css = app.url(`/cms/v1.0/getData/${await create("site.css", "text/css", "p { color: red }")}`);
    const js = app.url(`/cms/v1.0/getData/${await create("lib.js", "text/javascript", "window.libLoaded = 42;")}`);
    const page = await newPage();
    await page.goto(
      pages.put(
        "cors.html",
        `<!doctype html><link rel="stylesheet" href="${css}" crossorigin><script src="${js}" crossorigin></script><p>x</p>`,
      ),
    );
    expect(await page.evaluate(() => (window as unknown as { libLoaded?: number }).libLoaded)).toBe(42);
    expect(await page.evaluate(() => getComputedStyle(document.querySelector("p") as Element).color)).toBe(
      "rgb(255, 0, 0)",
    );
    expect(await page.evaluate((url) => fetch(url, { mode: "cors" }).then((r) => r.text()), css)).toBe(
      "p { color: red }",
    );
    await page.context().close();
  }, 30_000);

  it("opens a stored PDF inline in Chromium's viewer", async () => {
    const link = await signedLink(await create("hello.pdf", "application/pdf", tinyPdf()));
    const page = await newPage();
    await page.goto(link);
    expect(await pdfViewerState(page)).toBe("rendered");
    await page.context().close();
  }, 30_000);

  it("made no request outside loopback", () => {
    expect(external).toEqual([]);
  });
});

describe("with CMS_CONTENT_ORIGIN (localhost: another hostname of the same server)", () => {
  let split: TestApp;
  let contentOrigin: string;
  beforeAll(async () => {
    const bound = await bindLoopback();
    contentOrigin = `http://localhost:${bound.port}`;
    split = await startTestApp(
      { CMS_PORT: String(bound.port), CMS_CONTENT_ORIGIN: contentOrigin },
      { listenOn: bound },
    );
  });
  afterAll(async () => {
    await split?.close();
  });

  it("downloads stored HTML on the API origin and renders it, inert, on the content origin", async () => {
    const res = await fetch(split.url("/cms/v1.0/createResource"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceAuthor: "a",
        resourceName: "r.html",
        resourceMediaType: "text/html",
        resourceTenantId: "split",
        resourceBinary: Buffer.from(HOSTILE_HTML).toString("base64"),
      }),
    });
    const { resourceURI } = (await res.json()) as { resourceURI: string };
    const path = `/cms/v1.0/getData/${resourceURI}`;
    const page = await newPage();
    const [download] = await Promise.all([page.waitForEvent("download"), page.goto(split.url(path)).catch(() => null)]);
    expect(download.suggestedFilename()).toBe("r.html");
    await page.goto(`${contentOrigin}${path}`);
    expect(await settledTitle(page)).toBe("report");
    await page.context().close();
  }, 30_000);
});
