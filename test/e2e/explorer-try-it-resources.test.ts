/**
 * Every operation's "Try it out" in a real browser (Debian's Chromium via playwright-core), the way a
 * new user runs it: open the operation, click Try it out, fill the required fields only, Execute.
 * Optional inputs must start empty (an example pre-filled into them is sent: fake signatures,
 * preconditions and digests answer 403/412/422), a JSON body must start with its required properties
 * only, and the response preview must render images, video, audio and PDF under the page's CSP.
 * Auth is off (explorer.test.ts covers the login); everything is on 127.0.0.1.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { buildZip } from "../helpers/zip-writer.js";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { freePort, startTestApp, type TestApp } from "../helpers/test-app.js";

type Json = Record<string, unknown>;
type Schema = { $ref?: string; required?: string[]; allOf?: Schema[] };
type Parameter = { name: string; schema?: { default?: unknown } };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
};

const TENANT = "tryit";
let app: TestApp;
let origin: Origin;
let browser: Browser;
let page: Page;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };
const problems: string[] = [];
const ran: string[] = [];
// The resources the operations work on (filled in beforeAll).
const uids = { text: "", packageFile: "", png: "", pdf: "", audio: "", video: "", made: "" };

async function create(name: string, mediaType: string, bytes: Uint8Array | string): Promise<string> {
  const res = await fetch(app.url("/cms/v1.0/createResource"), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "seed",
      resourceTenantId: TENANT,
      resourceName: name,
      resourceMediaType: mediaType,
      resourceBinary: Buffer.from(bytes).toString("base64"),
    }),
  });
  const body = (await res.json()) as { resourceUID: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.resourceUID;
}

beforeAll(async () => {
  // A known loopback port, so signed links (createDataLink) have this server's URL to be built on.
  app = await startTestApp({ CMS_PORT: String(await freePort()) });
  origin = await startOrigin();
  doc = await (await fetch(app.url("/openapi.json"))).json();
  uids.text = await create("hello.txt", "text/plain", "hello from the explorer");
  // A package: the answer is its first file, whose parent (getParentUuid) is the zip.
  uids.packageFile = await create(
    "pack.zip",
    "application/zip",
    await buildZip([
      { name: "info.json", data: Buffer.from('{"startpage":"index.txt"}'), method: 0 },
      { name: "index.txt", data: Buffer.from("in a zip"), method: 0 },
    ]),
  );
  uids.png = await create("pixel.png", "image/png", PNG_1x1);
  uids.pdf = await create("doc.pdf", "application/pdf", tinyPdf());
  uids.audio = await create("tone.wav", "audio/wav", toneWav(1));
  // No video encoder here: the tone's bytes as a video type; Chromium plays them in <video> all the same.
  uids.video = await create("tone-video.wav", "video/x-wav", toneWav(1));
  browser = await launchChromium();
  page = await (await browser.newContext()).newPage();
  page.on("console", (message) => {
    if (message.type() === "error" || /content.security.policy/i.test(message.text()))
      problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (req) => {
    // Network requests only: Chromium's PDF viewer loads its own chrome:// and chrome-extension:// files.
    if (/^(https?|wss?):/.test(req.url()) && !/^http:\/\/127\.0\.0\.1[:/]/.test(req.url()))
      problems.push(`request outside loopback: ${req.url()}`);
  });
  await page.goto(app.url("/docs"));
  await page.locator(".opblock").first().waitFor({ timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await origin?.close();
  await app?.close();
});

function required(schema: Schema | undefined): string[] {
  const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").at(-1) ?? ""] : schema;
  return [...(resolved?.allOf ?? []).flatMap(required), ...(resolved?.required ?? [])];
}

function operation(id: string): { method: string; op: Operation } {
  for (const ops of Object.values(doc.paths))
    for (const [method, op] of Object.entries(ops)) if (op.operationId === id) return { method, op };
  throw new Error(`no operation ${id}`);
}

interface TryIt {
  /** Values for the required parameters, by name. */
  params?: Record<string, string>;
  /** One of several optional parameters the operation needs one of (listResources: a tenant). */
  oneOf?: Record<string, string>;
  /** Added to the JSON body Swagger UI starts with (its required properties only). */
  json?: Json;
  /** A text/plain or octet-stream body. */
  text?: string;
  /** Multipart fields (the required ones) and the file part. */
  form?: Record<string, string>;
  file?: { name: string; mimeType: string; buffer: Buffer };
}

const block = (id: string) => page.locator(`.opblock[id$="-${id}"]`).first();

async function open(id: string): Promise<Locator> {
  const op = block(id);
  if (!(await op.locator(".opblock-body").count())) await op.locator(".opblock-summary").first().click();
  const tryOut = op.locator("button.try-out__btn");
  if ((await tryOut.textContent())?.trim() === "Try it out") await tryOut.click();
  return op;
}

/** Runs `id`'s try-it with the required fields filled; returns the status and the body shown. */
async function tryIt(id: string, input: TryIt = {}): Promise<{ status: number; body: string; op: Locator }> {
  const { op: spec } = operation(id);
  const op = await open(id);
  const rows = op.locator("tr[data-param-name]");
  for (let i = 0; i < (await rows.count()); i++) {
    const row = rows.nth(i);
    const name = (await row.getAttribute("data-param-name")) ?? "";
    const isRequired = (await row.locator(".parameter__name.required").count()) > 0;
    const field = row.locator("input[type=text], textarea").first();
    const chosen = input.oneOf?.[name];
    if (chosen !== undefined) {
      await field.fill(chosen);
      continue;
    }
    if (!isRequired) {
      // Nothing but the server's own default is pre-filled into an optional input.
      const fallback = spec.parameters?.find((p) => p.name === name)?.schema?.default;
      const allowed = ["", ...(fallback === undefined ? [] : [String(fallback)])];
      if (await field.count())
        expect(allowed, `${id}: optional ${name} pre-filled`).toContain(await field.inputValue());
      continue;
    }
    const value = input.params?.[name];
    if (value === undefined) throw new Error(`${id}: no value for required ${name}`);
    await field.fill(value);
  }
  const json = spec.requestBody?.content["application/json"];
  if (json) {
    const area = op.locator("textarea.body-param__text");
    const start = JSON.parse((await area.inputValue()) || "{}") as Json;
    expect(Object.keys(start).sort(), `${id}: the body starts with its required properties only`).toEqual(
      required(json.schema).sort(),
    );
    await area.fill(JSON.stringify({ ...start, ...input.json }));
  }
  if (input.text !== undefined) await op.locator("textarea.body-param__text").fill(input.text);
  if (spec.requestBody?.content["multipart/form-data"]) {
    const props = op.locator("tr[data-property-name]");
    for (let i = 0; i < (await props.count()); i++) {
      const row = props.nth(i);
      const name = (await row.getAttribute("data-property-name")) ?? "";
      const text = row.locator("input[type=text]");
      if (!(await text.count())) continue;
      if (input.form?.[name] !== undefined) await text.fill(input.form[name]);
      else expect(await text.inputValue(), `${id}: optional field ${name} pre-filled`).toBe("");
    }
    if (input.file) await op.locator('tr[data-property-name="file"] input[type=file]').setInputFiles(input.file);
  }
  await op.locator("button.execute").click();
  const status = op.locator(".live-responses-table .response .response-col_status").first();
  await status.waitFor({ timeout: 20_000 });
  const body = (await op.locator(".live-responses-table .response-col_description pre").first().textContent()) ?? "";
  ran.push(id);
  console.info(`try-it ${id}: ${await status.textContent()} ${body.slice(0, 300)}`);
  const result = { status: Number((await status.textContent())?.trim().slice(0, 3)), body, op };
  // Closed again so the next run of the same operation starts from a fresh block.
  await op.locator("button.btn-clear").click();
  return result;
}

async function expectTry(id: string, input: TryIt, status: number): Promise<Json> {
  const result = await tryIt(id, input);
  expect(result.status, `${id}: ${result.body.slice(0, 300)}`).toBe(status);
  try {
    return JSON.parse(result.body) as Json;
  } catch {
    return {};
  }
}

describe("explorer try-it on its defaults (required fields only)", () => {
  it("runs the meta operations", async () => {
    await expectTry("apiVersion", {}, 200);
    await expectTry("healthz", {}, 200);
    await expectTry("readyz", {}, 200);
  }, 400_000);

  it("runs createResource, queryResource, listResources and createDataLink", async () => {
    const made = await expectTry(
      "createResource",
      {
        json: {
          resourceAuthor: "explorer",
          resourceTenantId: TENANT,
          resourceName: "made.txt",
          resourceMediaType: "text/plain",
          resourceExternalURI: origin.put("made", "made from the explorer"),
        },
      },
      201,
    );
    uids.made = made.resourceUID as string;
    await expectTry("queryResource", { json: { queryUID: uids.text } }, 200);
    await expectTry("listResources", { oneOf: { resourceTenantId: TENANT } }, 200);
    await expectTry("createDataLink", { json: { resourceURI: `${uids.text}/hello.txt` } }, 200);
  }, 400_000);

  it("runs getDataByDTO, getParentUuid, uploadResource and getUsage", async () => {
    await expectTry("getDataByDTO", { json: { resourceUID: uids.text } }, 200);
    await expectTry("getParentUuid", { text: uids.packageFile }, 200);
    await expectTry(
      "uploadResource",
      {
        form: { resourceAuthor: "explorer", resourceTenantId: TENANT },
        file: { name: "upload.png", mimeType: "image/png", buffer: PNG_1x1 },
      },
      201,
    );
    await expectTry("getUsage", { params: { resourceTenantId: TENANT } }, 200);
  }, 400_000);

  it("runs every content operation (GET and HEAD)", async () => {
    const path = { context: uids.text, path: "hello.txt" };
    for (const id of ["getData", "getDataHead", "getMultiPartData", "getMultiPartDataHead"])
      await expectTry(id, { params: path }, 200);
    await expectTry("getDataUuid", { params: { resourceUID: uids.text } }, 200);
    await expectTry("getDataUuidHead", { params: { resourceUID: uids.text } }, 200);
  }, 400_000);

  it("previews an image, a video, an audio file and a PDF from blob: URLs", async () => {
    const shown = async (uid: string, selector: string) => {
      const op = await open("getDataUuid");
      await op.locator('tr[data-param-name="resourceUID"] input').fill(uid);
      await op.locator("button.execute").click();
      const element = op.locator(`.live-responses-table ${selector}`).first();
      await element.waitFor({ timeout: 20_000 });
      return element;
    };
    const img = await shown(uids.png, "img");
    await expect.poll(() => img.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth)).toBe(1);
    await block("getDataUuid").locator("button.btn-clear").click();
    for (const [uid, tag] of [
      [uids.video, "video"],
      [uids.audio, "audio"],
    ] as const) {
      const media = await shown(uid, tag);
      expect(await media.getAttribute("src")).toMatch(/^blob:/);
      // Loaded: the browser read the bytes through the blob: URL (the CSP let it) and knows the duration.
      await expect.poll(() => media.evaluate((e: HTMLMediaElement) => e.duration)).toBeCloseTo(1, 1);
      await block("getDataUuid").locator("button.btn-clear").click();
    }
    const pdf = await shown(uids.pdf, "object");
    expect(await pdf.getAttribute("data")).toMatch(/^blob:/);
    expect(await pdf.getAttribute("type")).toBe("application/pdf");
    await block("getDataUuid").locator("button.btn-clear").click();
  }, 400_000);

  it("caused no console error, no page error and no request outside loopback", () => {
    expect(problems).toEqual([]);
  });
});
