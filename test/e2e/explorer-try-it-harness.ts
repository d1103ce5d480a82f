/**
 * The explorer's "Try it out" driven the way a new user drives it, for explorer-try-it.test.ts:
 * open the operation, click Try it out, fill the required fields only, Execute. Optional inputs must
 * start empty (an example pre-filled into them is sent: fake signatures, preconditions and digests
 * answer 403/412/422), a JSON body must start with its required properties only. One server, one
 * Chromium and one page; operations are expanded in place (no reloads). Auth is off
 * (explorer.test.ts covers the login); everything is on 127.0.0.1.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/browser.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { type Json, type TryIt, trySeeding } from "../helpers/try-it-seed.js";

export type { Json, TryIt };
type Schema = { $ref?: string; required?: string[]; allOf?: Schema[] };
type Parameter = { name: string; in: string; required?: boolean; schema?: { default?: unknown } };
type Operation = {
  operationId: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

export const TENANT = "tryit";

export interface TryItResult {
  status: number;
  body: string;
  /** The response headers as Swagger UI lists them ("name: value" lines). */
  headers: string;
}

export interface Explorer {
  app: TestApp;
  origin: Origin;
  page: Page;
  /** A resource made through the API (not the UI), for the operations that need one. */
  create(name: string, mediaType: string, bytes: Uint8Array | string): Promise<string>;
  /** A JSON POST to the API (not the UI); the answer's body, after checking its status. */
  post(path: string, body: Json, status: number): Promise<Json>;
  /** The operation's block, expanded, with Try it out on. */
  open(id: string): Promise<Locator>;
  /** Runs `id`'s try-it with the required fields filled. */
  tryIt(id: string, input?: TryIt): Promise<TryItResult>;
  /** tryIt, checking the status; the body parsed as JSON ({} if it is not). */
  expectTry(id: string, input: TryIt, status: number): Promise<Json & { headers: string }>;
}

interface Session extends Explorer {
  browser: Browser;
  problems: string[];
}

/**
 * A click as the page's own handlers see it, without Playwright's wait for the element to be
 * visible, stable and unobscured: on a loaded machine those waits made up most of the file's time.
 */
export const press = (target: Locator) => target.dispatchEvent("click");

/**
 * Types into a parameter or form field. Swagger UI hands a field's value on 350 ms after the last
 * keystroke, or at once when the field loses focus (as it does when a user clicks Execute): blurred
 * here, since press() moves no focus.
 */
export async function type(field: Locator, value: string) {
  await field.fill(value);
  await field.blur();
}

async function start(): Promise<Session> {
  const [app, origin, browser] = await Promise.all([startTestApp(), startOrigin(), launchChromium()]);
  const page = await (await browser.newContext()).newPage();
  const problems: string[] = [];
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
  const [doc] = await Promise.all([
    fetch(app.url("/openapi.json")).then((res) => res.json() as Promise<Document>),
    // Ready when Swagger UI has drawn the operations, not at "load": on a loaded machine the 1.7 MB
    // bundle alone can take longer than Playwright's default navigation timeout.
    page
      .goto(app.url("/docs"), { waitUntil: "commit" })
      .then(() => page.locator(".opblock").first().waitFor({ timeout: 100_000 })),
  ]);
  const { post, create } = trySeeding(app, TENANT);

  function operation(id: string): Operation {
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops)) if (op.operationId === id) return op;
    throw new Error(`no operation ${id}`);
  }

  function required(schema: Schema | undefined): string[] {
    const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").at(-1) ?? ""] : schema;
    return [...(resolved?.allOf ?? []).flatMap(required), ...(resolved?.required ?? [])];
  }

  async function open(id: string): Promise<Locator> {
    const op = page.locator(`.opblock[id$="-${id}"]`).first();
    if (!(await op.locator(".opblock-body").count())) await press(op.locator(".opblock-summary-control"));
    const tryOut = op.locator("button.try-out__btn");
    if ((await tryOut.textContent())?.trim() === "Try it out") await press(tryOut);
    await op.locator("button.execute").waitFor();
    return op;
  }

  async function fillParameters(id: string, op: Locator, spec: Operation, input: TryIt) {
    // One round trip reads every input (each locator call is one, and they add up on a loaded machine).
    const rows = await op.locator("tr[data-param-name]").evaluateAll((trs) =>
      trs.map((tr) => {
        const field = tr.querySelector<HTMLInputElement>("input[type=text], textarea, select");
        return {
          name: tr.getAttribute("data-param-name") ?? "",
          in: tr.getAttribute("data-param-in") ?? "",
          required: tr.querySelector(".parameter__name.required") !== null,
          value: field?.value ?? null,
          select: field?.tagName === "SELECT",
        };
      }),
    );
    for (const row of rows) {
      const field = op.locator(`tr[data-param-name="${row.name}"][data-param-in="${row.in}"]`).locator("input, select");
      const wanted = input.oneOf?.[row.name] ?? (row.required ? input.params?.[row.name] : undefined);
      if (wanted !== undefined) {
        await (row.select ? field.selectOption(wanted) : type(field, wanted));
      } else if (row.required) {
        // Left as it starts: it must start with something that works.
        expect(row.value, `${id}: required ${row.name} starts empty`).toBeTruthy();
      } else if (row.value !== null) {
        // Nothing but the server's own default is pre-filled into an optional input.
        const fallback = spec.parameters?.find((p) => p.name === row.name && p.in === row.in)?.schema?.default;
        expect(
          ["", ...(fallback === undefined ? [] : [String(fallback)])],
          `${id}: optional ${row.name} pre-filled`,
        ).toContain(row.value);
      }
    }
  }

  async function fillBody(id: string, op: Locator, spec: Operation, input: TryIt) {
    const content = spec.requestBody?.content ?? {};
    if (content["application/json"]) {
      const area = op.locator("textarea.body-param__text");
      const start = JSON.parse((await area.inputValue()) || "{}") as Json;
      expect(Object.keys(start).sort(), `${id}: the body starts with its required properties only`).toEqual(
        required(content["application/json"].schema).sort(),
      );
      await area.fill(JSON.stringify({ ...start, ...input.json }));
    }
    if (input.text !== undefined) await op.locator("textarea.body-param__text").fill(input.text);
    if (content["multipart/form-data"]) {
      const fields = await op.locator("tr[data-property-name]").evaluateAll((trs) =>
        trs.flatMap((tr) => {
          const text = tr.querySelector<HTMLInputElement>("input[type=text]");
          return text ? [{ name: tr.getAttribute("data-property-name") ?? "", value: text.value }] : [];
        }),
      );
      for (const { name, value } of fields) {
        const wanted = input.form?.[name];
        if (wanted !== undefined) await type(op.locator(`tr[data-property-name="${name}"] input[type=text]`), wanted);
        else expect(value, `${id}: optional field ${name} pre-filled`).toBe("");
      }
      if (input.file) await op.locator('tr[data-property-name="file"] input[type=file]').setInputFiles(input.file);
    } else if (input.file) {
      await op.locator(".opblock-section-request-body input[type=file]").setInputFiles(input.file);
    }
  }

  async function tryIt(id: string, input: TryIt = {}): Promise<TryItResult> {
    const spec = operation(id);
    const op = await open(id);
    await fillParameters(id, op, spec, input);
    await fillBody(id, op, spec, input);
    await press(op.locator("button.execute"));
    const status = op.locator(".live-responses-table .response .response-col_status").first();
    await status.waitFor({ timeout: 60_000 });
    const shown = await op
      .locator(".live-responses-table .response .response-col_description")
      .first()
      .evaluate((cell) => {
        // The element after each heading; a body's text is its <pre> (beside a Download button).
        const after = (title: string) => {
          const next = [...cell.querySelectorAll("h5")].find(
            (h) => h.textContent?.trim() === title,
          )?.nextElementSibling;
          return (next?.matches("pre") ? next : next?.querySelector("pre"))?.textContent ?? next?.textContent ?? "";
        };
        return { body: after("Response body"), headers: after("Response headers") };
      });
    const code = Number((await status.textContent())?.trim().slice(0, 3));
    console.info(`try-it ${id}: ${code} ${shown.body.slice(0, 200)}`);
    // Cleared, so the next run of the same operation starts afresh, and closed: a page with fewer
    // open operations renders faster.
    await press(op.locator("button.btn-clear"));
    await press(op.locator(".opblock-summary-control"));
    return { status: code, ...shown };
  }

  async function expectTry(id: string, input: TryIt, status: number): Promise<Json & { headers: string }> {
    const result = await tryIt(id, input);
    expect(result.status, `${id}: ${result.body.slice(0, 300)}`).toBe(status);
    let body: Json = {};
    try {
      body = JSON.parse(result.body) as Json;
    } catch {}
    return { ...body, headers: result.headers };
  }

  return { app, origin, browser, page, problems, create, post, open, tryIt, expectTry };
}

/**
 * A describe block with the explorer started around it. `body` adds the tests (in order: later ones
 * may use what earlier ones made); the block ends by checking that nothing went wrong in the page.
 */
export function describeTryIt(title: string, body: (explorer: () => Explorer) => void) {
  // Generous: the suite shares two cores with Chromium and the servers of other files.
  describe(`explorer try-it on its defaults: ${title}`, { timeout: 180_000 }, () => {
    let session: Session | undefined;
    beforeAll(async () => {
      session = await start();
    }, 120_000);
    afterAll(async () => {
      await session?.browser.close();
      await session?.origin.close();
      await session?.app.close();
    });
    const explorer = () => {
      if (!session) throw new Error("the explorer did not start");
      return session;
    };

    body(explorer);

    it("caused no console error, no page error and no request outside loopback", () => {
      expect(explorer().problems).toEqual([]);
    });
  });
}
