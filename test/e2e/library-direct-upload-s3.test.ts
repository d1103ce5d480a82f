/**
 * The media library's large uploads straight to a real S3 engine in a real browser (Debian's
 * Chromium via playwright-core), docs/direct-storage.md "Browsers": the Node server on s3rver, both
 * on 127.0.0.1, auth off. With the bucket's CORS rule as the docs give it (read from the page), the
 * page's CSP lets the PUT go to the bucket's origin, and the service's listening socket receives a
 * few KiB of an 8 MiB file (its cms_http_received_bytes_total); without the rule the browser cannot
 * send, and the file goes through tus instead.
 *
 * s3rver rather than the suite's Ceph RGW: it runs in this process in milliseconds (RGW takes a
 * shared cluster and tens of seconds), it honours bucket CORS rules (preflight and the actual PUT,
 * headers included) as S3 does, and it stores what the browser sends. It checks no signature, so the
 * service reads the object once at completion; that read is the service's own request to the bucket,
 * not bytes on its listening socket. test/direct/s3-direct.test.ts covers the signed PUT on RGW.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { AwsClient } from "aws4fetch";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIRECT_UPLOAD_MIN_BYTES } from "../../src/library-client/direct-upload.js";
import { launchChromium } from "../helpers/browser.js";
import { parsePromText } from "../helpers/prom-text.js";
import { S3RVER_ACCESS_KEY_ID, type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { eventually, openLibraryAs } from "./library-suite.js";

const API = "/cms/v1.0";
const TENANT = "media";
const METRICS_TOKEN = "library-s3-metrics-token";
const MiB = 1024 * 1024;
/** The docs' example origin, replaced by the page's. */
const DOCS_ORIGIN = "https://cms.example.com";

/** docs/direct-storage.md's CORS rule for S3 (its ```xml block) for `pageOrigin`. */
async function corsRuleFromDocs(pageOrigin: string): Promise<string> {
  const page = await readFile(new URL("../../docs/direct-storage.md", import.meta.url), "utf8");
  const xml = /```xml\n([\s\S]*?)```/.exec(page)?.[1];
  if (!xml?.includes(DOCS_ORIGIN)) throw new Error("docs/direct-storage.md has no CORS rule naming the example origin");
  return xml.replace(/^ {2}/gm, "").replaceAll(DOCS_ORIGIN, pageOrigin);
}

/** PutBucketCors (`xml`) or DeleteBucketCors (null) over S3's API, as a deployer's tool sends it. */
async function setBucketCors(s3: S3TestServer, xml: string | null): Promise<void> {
  const aws = new AwsClient({
    accessKeyId: S3RVER_ACCESS_KEY_ID,
    secretAccessKey: "S3RVER",
    service: "s3",
    region: "us-east-1",
  });
  const url = `${s3.endpoint}/${s3.bucket}?cors`;
  const res = await (xml === null
    ? aws.fetch(url, { method: "DELETE" })
    : aws.fetch(url, {
        method: "PUT",
        headers: { "content-md5": createHash("md5").update(xml).digest("base64") },
        body: xml,
      }));
  expect(res.status, await res.text()).toBeLessThan(300);
}

// Each test moves 8 MiB through the browser and s3rver: 15 s alone on a loaded machine, so more room
// than the default 30 s (it timed out beside three other heavy files at a load average of 13).
describe("media library: a large file straight to an S3 bucket (s3rver, CORS)", { timeout: 90_000 }, () => {
  let s3: S3TestServer;
  let app: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const requests: Request[] = [];
  const failed: string[] = [];
  const cspErrors: string[] = [];
  const consoleErrors: string[] = [];

  const statuses = () => page.locator("#uploads li .status").allTextContents();
  const upload = (name: string, buffer: Buffer) =>
    page.getByLabel("Upload", { exact: true }).setInputFiles({ name, mimeType: "application/octet-stream", buffer });
  const calls = (from: number) => requests.slice(from).map((r) => `${r.method()} ${new URL(r.url()).pathname}`);

  async function metrics() {
    const res = await fetch(app.url("/metrics"), { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    return parsePromText(await res.text());
  }
  /** Bytes the service read from its clients' connections (heads and bodies), /metrics scrapes included. */
  const received = async () => (await metrics()).value("cms_http_received_bytes_total");

  async function stored(name: string): Promise<Buffer> {
    const list = await fetch(app.url(`${API}/listResources?tenant=${TENANT}&limit=200`));
    const { resources } = (await list.json()) as { resources: { resourceURI: string }[] };
    const resource = resources.find((r) => r.resourceURI.endsWith(`/${name}`));
    if (!resource) throw new Error(`${name} is not listed`);
    const data = await fetch(app.url(`${API}/getData/${resource.resourceURI}`));
    expect(data.status).toBe(200);
    return Buffer.from(await data.arrayBuffer());
  }

  beforeAll(async () => {
    [s3, browser] = await Promise.all([startS3Server(), launchChromium()]);
    app = await startTestApp({
      ...s3Settings(s3),
      CMS_METRICS_ENABLED: "true",
      CMS_METRICS_TOKEN: METRICS_TOKEN,
      CMS_MAX_RESOURCE_BYTES: String(2 * DIRECT_UPLOAD_MIN_BYTES),
    });
    await setBucketCors(s3, await corsRuleFromDocs(app.baseUrl));
    context = await browser.newContext();
    page = await context.newPage();
    page.on("request", (req) => requests.push(req));
    page.on("requestfailed", (req) => failed.push(`${req.method()} ${req.url()}`));
    page.on("console", (message) => {
      if (/content.security.policy/i.test(message.text())) cspErrors.push(message.text());
      else if (message.type() === "error") consoleErrors.push(message.text());
    });
    page.on("pageerror", (error) => consoleErrors.push(error.message));
    await openLibraryAs(page, {
      baseUrl: app.baseUrl,
      tenant: TENANT,
      token: async () => null,
      user: null,
      creator: null,
      imageTransforms: true,
      close: async () => {},
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.close();
    await s3?.close();
  });

  const COMPLETE = `${API}/completeUpload`;

  it("sends the file to the bucket's origin: the service's socket receives under 1 MiB of it", async () => {
    const bytes = randomBytes(DIRECT_UPLOAD_MIN_BYTES);
    const from = requests.length;
    const before = await received();
    await upload("to-bucket.bin", bytes);
    await eventually(statuses).toEqual(["done"]);

    expect(cspErrors).toEqual([]);
    expect(failed).toEqual([]);
    const puts = requests.slice(from).filter((r) => r.method() === "PUT");
    expect(puts.map((r) => new URL(r.url()).origin)).toEqual([s3.endpoint]);
    expect(new URL(puts[0]!.url()).pathname).toMatch(new RegExp(`^/${s3.bucket}/direct/`));
    expect(calls(from)).not.toContain(`POST ${API}/uploads`); // no tus
    expect(calls(from)).toContain(`POST ${COMPLETE}`);
    // Counted when each answer is over: once completeUpload's is, every request of this upload is.
    await eventually(async () => (await metrics()).value("cms_http_requests_total", { route: COMPLETE })).toBe(1);
    expect((await received()) - before).toBeLessThan(MiB);
    expect(consoleErrors).toEqual([]);
    expect((await stored("to-bucket.bin")).equals(bytes)).toBe(true);
  });

  it("without the bucket's CORS rule the browser cannot send: the file goes through tus", async () => {
    await setBucketCors(s3, null);
    const bytes = randomBytes(DIRECT_UPLOAD_MIN_BYTES);
    const from = requests.length;
    const failedFrom = failed.length;
    const before = await received();
    await upload("through-tus.bin", bytes);
    await eventually(statuses).toEqual(["done", "done"]);
    expect(failed.slice(failedFrom)).toEqual([
      expect.stringMatching(new RegExp(`^PUT ${s3.endpoint}/${s3.bucket}/direct/`)),
    ]);
    expect(calls(from)).toContain(`POST ${API}/uploads`);
    expect(calls(from)).not.toContain(`POST ${COMPLETE}`);
    // Through the service this time: every byte on its socket.
    await eventually(async () => (await received()) - before).toBeGreaterThan(bytes.length);
    expect((await stored("through-tus.bin")).equals(bytes)).toBe(true);
    // Chromium reports the refused PUT on the console; nothing else went wrong.
    expect(consoleErrors.filter((e) => !e.includes(s3.endpoint) && !e.includes("net::ERR_FAILED"))).toEqual([]);
    expect(cspErrors).toEqual([]);
  });
});
