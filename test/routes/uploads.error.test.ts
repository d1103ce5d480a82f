/** uploadResource failures: problem+json naming the part, and nothing stored on any of them. */
import { describe, expect, it } from "vitest";
import { expectProblem, form, tableCounts, upload, volumeFiles, useCmsApp } from "../helpers/cms-client.js";
import { patternBytes } from "../helpers/origin.js";
import { plainZip } from "../helpers/packages.js";

const LIMIT = 64 * 1024;

const t = useCmsApp("uperr", { CMS_MAX_RESOURCE_BYTES: String(LIMIT) }, { transport: "in-process" });

const fields = { resourceAuthor: "Uploader", resourceTenantId: "uperr", resourceName: "f.bin" };
const small = { bytes: new Uint8Array([1, 2, 3]) };

async function refuses(
  body: FormData | string,
  status: number,
  code: string,
  pointer?: string,
  headers?: Record<string, string>,
) {
  const [files, counts] = [await volumeFiles(t.app), await tableCounts(t.app)];
  const p = await expectProblem(await upload(t.app, body, headers), status, code, pointer);
  expect(await volumeFiles(t.app)).toEqual(files);
  expect(await tableCounts(t.app)).toEqual(counts);
  return p;
}

describe("uploadResource refusals", () => {
  it("a file over CMS_MAX_RESOURCE_BYTES → 413 naming the file part", async () => {
    await refuses(form(fields, { bytes: patternBytes(0, LIMIT + 1) }), 413, "PAYLOAD_TOO_LARGE", "/body/file");
  });

  it("accepts a file exactly at the limit", async () => {
    expect((await upload(t.app, form(fields, { bytes: patternBytes(0, LIMIT) }))).status).toBe(201);
  });

  it("no file part → 400 naming file", async () => {
    await refuses(form(fields), 400, "VALIDATION_FAILED", "/body/file");
  });

  it.each([
    ["resourceTenantId", { resourceTenantId: "bad tenant" }],
    ["resourceAuthor", { resourceAuthor: "" }],
    ["resourceMediaType", { resourceMediaType: "nonsense" }],
    ["resourceName", { resourceName: "../x" }],
    ["resourceName", { resourceName: "invoice\u202Efdp.exe" }],
  ])("an invalid %s → 400 naming it", async (field, change) => {
    await refuses(form({ ...fields, ...change }, small), 400, "VALIDATION_FAILED", `/body/${field}`);
  });

  it("a file part whose Content-Type is no media type → 400 naming the file part", async () => {
    await refuses(form(fields, { ...small, type: "nonsense" }), 400, "VALIDATION_FAILED", "/body/file");
  });

  it("a file name with a bidirectional control (the name when no resourceName is sent) → 400 naming resourceName", async () => {
    const { resourceName: _, ...withoutName } = fields;
    for (const name of ["invoice\u202Efdp.exe", "a\u2067b.bin", "a\u200Fb.bin"]) {
      await refuses(form(withoutName, { ...small, name }), 400, "VALIDATION_FAILED", "/body/resourceName");
    }
  });

  it("required fields sent neither before nor after the file → 400 naming them", async () => {
    await refuses(form({}, small, { resourceTenantId: "uploads" }), 400, "VALIDATION_FAILED", "/body/resourceAuthor");
  });

  it("an unknown field, a repeated field, or a file under another name → 400 naming the part", async () => {
    await refuses(form({ ...fields, extra: "x" }, small), 400, "VALIDATION_FAILED", "/body/extra");
    const twice = form(fields);
    twice.append("resourceAuthor", "again");
    twice.append("file", new Blob([new Uint8Array([1])]), "f.bin");
    await refuses(twice, 400, "VALIDATION_FAILED", "/body/resourceAuthor");
    const other = form(fields);
    other.append("attachment", new Blob([new Uint8Array([1])]), "f.bin");
    await refuses(other, 400, "VALIDATION_FAILED", "/body/attachment");
  });

  it("a body that is not multipart/form-data → 415; a truncated one → 400", async () => {
    await refuses(JSON.stringify(fields), 415, "UNSUPPORTED_MEDIA_TYPE", undefined, {
      "content-type": "application/json",
    });
    const truncated =
      '--b\r\nContent-Disposition: form-data; name="resourceAuthor"\r\n\r\nA\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\npartial';
    await refuses(truncated, 400, "VALIDATION_FAILED", undefined, {
      "content-type": "multipart/form-data; boundary=b",
    });
  });

  it("a zip package without a start page → 400 naming the file part", async () => {
    await refuses(
      form({ ...fields, resourceName: "p.zip", resourceMediaType: "application/zip" }, { bytes: await plainZip() }),
      400,
      "VALIDATION_FAILED",
      "/body/file",
    );
  });
});
