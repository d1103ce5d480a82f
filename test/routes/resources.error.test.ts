/** Every documented failure of the resource endpoints: status, problem+json, code and named field. */
import { readdir } from "node:fs/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { json, startTestApp, type TestApp } from "../helpers/test-app.js";

let origin: Origin;
let app: TestApp;

beforeAll(async () => {
  origin = await startOrigin();
  app = await startTestApp(
    {
      CMS_MAX_RESOURCE_BYTES: String(64 * 1024),
      CMS_FETCH_TIMEOUT_MS: "1500",
      CMS_MAX_INLINE_BYTES: "16384",
    },
    { transport: "in-process" },
  );
});
afterAll(async () => {
  await app.close();
  await origin.close();
});
afterEach(() => expect(app.unhandledErrors()).toEqual([]));

const valid = () => ({
  resourceAuthor: "Test Author",
  resourceExternalURI: origin.put("ok", "fine"),
  resourceMediaType: "text/plain",
  resourceName: "ok.txt",
  resourceTenantId: "errors",
});

async function problem(res: Response) {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = (await res.json()) as { status: number; code: string; detail: string; errors?: { pointer: string }[] };
  expect(body.status).toBe(res.status);
  expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
  return body;
}

const post = (body: unknown) => app.fetch(app.url("/cms/v1.0/createResource"), json(body));

async function volumeFiles() {
  const entries = await readdir(app.volume, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

describe("createResource validation", () => {
  it.each([
    ["resourceAuthor", undefined],
    ["resourceAuthor", ""],
    ["resourceAuthor", "line\nbreak"],
    ["resourceExternalURI", undefined],
    ["resourceExternalURI", "not a url"],
    ["resourceExternalURI", "ftp://127.0.0.1/file"],
    ["resourceExternalURI", "file:///etc/passwd"],
    ["resourceExternalURI", "/relative/path"],
    ["resourceMediaType", "png"],
    ["resourceMediaType", "image/png\r\nx-injected: 1"],
    ["resourceMediaType", "text/plain; charset"],
    ["resourceName", undefined],
    ["resourceName", ""],
    ["resourceName", "../etc/passwd"],
    ["resourceName", "a/b.txt"],
    ["resourceName", "a\\b.txt"],
    ["resourceName", ".."],
    ["resourceName", "."],
    ["resourceName", "nul\u0000.txt"],
    // Line and paragraph separators: the router cannot match them in a path, so such a resource could never be served.
    ["resourceName", "line\u2028sep.txt"],
    ["resourceName", "para\u2029sep.txt"],
    // Bidirectional controls make a name display as another: "invoice\u202Efdp.exe" shows as "invoiceexe.pdf".
    ["resourceName", "invoice\u202Efdp.exe"],
    ["resourceName", "a\u202Ab.txt"],
    ["resourceName", "a\u2066b.txt"],
    ["resourceName", "a\u2069b.txt"],
    ["resourceName", "a\u200Eb.txt"],
    ["resourceName", "a\u200Fb.txt"],
    ["resourceName", "a\u061Cb.txt"],
    ["resourceName", "é".repeat(128)],
    ["resourceTenantId", undefined],
    ["resourceTenantId", "a/b"],
    ["resourceTenantId", "x".repeat(65)],
    ["resourceTenantId", "tenant id"],
  ])("rejects %s = %j with 400 naming the field", async (field, value) => {
    const body: Record<string, unknown> = { ...valid(), [field]: value };
    if (value === undefined) delete body[field];
    const res = await post(body);
    expect(res.status).toBe(400);
    const p = await problem(res);
    expect(p.code).toBe("VALIDATION_FAILED");
    expect(p.errors?.map((e) => e.pointer)).toContain(`/json/${field}`);
    expect(p.detail).toContain(field);
  });

  it("names every bad field at once", async () => {
    const res = await post({ resourceAuthor: "" });
    const p = await problem(res);
    expect(p.errors?.map((e) => e.pointer).sort()).toEqual(
      [
        "/json/resourceAuthor",
        "/json/resourceBinary",
        "/json/resourceExternalURI",
        "/json/resourceName",
        "/json/resourceTenantId",
      ].sort(),
    );
  });

  it("accepts media types with parameters and unicode file names", async () => {
    const res = await post({
      ...valid(),
      resourceMediaType: 'text/plain; charset="utf-8"',
      resourceName: "日本語 file (1).txt",
    });
    expect(res.status).toBe(201);
    // Right-to-left letters are names like any other; only the invisible controls are refused.
    expect((await post({ ...valid(), resourceName: "שלום عربي.txt" })).status).toBe(201);
  });

  it("answers 400 for malformed JSON and 415 for another content type", async () => {
    const malformed = await app.fetch(app.url("/cms/v1.0/createResource"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(malformed.status).toBe(400);
    expect((await problem(malformed)).code).toBe("VALIDATION_FAILED");

    const form = await app.fetch(app.url("/cms/v1.0/createResource"), {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify(valid()),
    });
    expect(form.status).toBe(415);
    expect((await problem(form)).code).toBe("UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 413 for a JSON body past the inline-content allowance (CMS_MAX_INLINE_BYTES as base64 + 64 KiB)", async () => {
    const res = await post({ ...valid(), resourceAuthor: "x".repeat(100_000) });
    expect(res.status).toBe(413);
    expect((await problem(res)).code).toBe("PAYLOAD_TOO_LARGE");
  });
});

describe("createResource origin failures leave neither row nor blob", () => {
  it.each([
    ["an origin 404", "/status/404", 502, "ORIGIN_FAILED"],
    ["an origin 500", "/status/500", 502, "ORIGIN_FAILED"],
    ["too many redirects", "/redirect/6/ok", 502, "ORIGIN_FAILED"],
    ["content over the size cap", `/gen/${64 * 1024 + 1}`, 413, "PAYLOAD_TOO_LARGE"],
    ["a lying Content-Length over the cap", `/lying/${200 * 1024}`, 413, "PAYLOAD_TOO_LARGE"],
    ["an origin that stalls", "/stall", 504, "ORIGIN_TIMEOUT"],
  ])("%s (%s) → %i %s", async (_label, path, status, code) => {
    const before = await volumeFiles();
    const rowsBefore = await app.rowCount();
    const res = await post({ ...valid(), resourceExternalURI: origin.url(path) });
    expect(res.status).toBe(status);
    const p = await problem(res);
    expect(p.code).toBe(code);
    expect(p.errors?.[0]?.pointer).toBe("/body/resourceExternalURI");
    expect(await volumeFiles()).toEqual(before);
    expect(await app.rowCount()).toBe(rowsBefore);
  });

  it("accepts content exactly at the size cap", async () => {
    const res = await post({ ...valid(), resourceExternalURI: origin.url(`/gen/${64 * 1024}`) });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { size: number }).size).toBe(64 * 1024);
  });

  it("answers 502 when nothing listens at the origin", async () => {
    const closed = await startOrigin();
    const url = closed.url("/bytes/x");
    await closed.close();
    const res = await post({ ...valid(), resourceExternalURI: url });
    expect(res.status).toBe(502);
    expect((await problem(res)).code).toBe("ORIGIN_FAILED");
  });
});

describe("createResource SSRF policy (CMS_FETCH_ALLOW_PRIVATE=false)", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ CMS_FETCH_ALLOW_PRIVATE: "false" }, { transport: "in-process" });
  });
  afterAll(() => strict.close());

  it("refuses loopback targets in every spelling before connecting", async () => {
    const port = new URL(origin.url("/")).port;
    const before = origin.connections;
    for (const host of [
      "127.0.0.1",
      "localhost",
      "[::1]",
      "2130706433",
      "0x7f.1",
      "127.1",
      "[::ffff:127.0.0.1]",
      "0.0.0.0",
    ]) {
      const res = await strict.fetch(
        strict.url("/cms/v1.0/createResource"),
        json({ ...valid(), resourceExternalURI: `http://${host}:${port}/bytes/ok` }),
      );
      expect(res.status, host).toBe(422);
      const p = await problem(res);
      expect(p.code).toBe("ORIGIN_REFUSED");
      expect(p.errors?.[0]?.pointer).toBe("/body/resourceExternalURI");
    }
    expect(origin.connections).toBe(before);
  });
});

describe("getData not found", () => {
  let uid: string;
  beforeAll(async () => {
    const res = await post({ ...valid(), resourceTenantId: "owner-tenant" });
    uid = ((await res.json()) as { resourceUID: string }).resourceUID;
  });

  it.each([
    ["an unknown UID", () => "0000000000aaaaaaaaaaaaaaaaaaaa-owner-tenant/ok.txt"],
    ["another tenant's UID", () => `${uid.split("-")[0]}-other-tenant/ok.txt`],
    ["a wrong name", () => `${uid}/other.txt`],
    ["a malformed UID", () => "nonsense/ok.txt"],
    ["an encoded traversal", () => `${uid}/..%2F..%2Fpackage.json`],
    ["an encoded slash in the name", () => `${uid}/ok.txt%2Fx`],
  ])("answers 404 problem for %s", async (_label, tail) => {
    const res = await app.fetch(app.url(`/cms/v1.0/getData/${tail()}`));
    expect(res.status).toBe(404);
    expect((await problem(res)).code).toBe("NOT_FOUND");
  });

  it("answers 404 problem for a path with extra segments", async () => {
    const res = await app.fetch(app.url(`/cms/v1.0/getData/${uid}/ok.txt/more`));
    expect(res.status).toBe(404);
  });
});
