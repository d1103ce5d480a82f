/** uploadResource: multipart/form-data streamed to storage, with the createResource fields. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API, form, type ResourceDto, upload, useCmsApp } from "../helpers/cms-client.js";
import { PNG_1x1, tinyPdf, toneWav } from "../helpers/media-fixtures.js";
import { patternBytes } from "../helpers/origin.js";
import { scormZip } from "../helpers/packages.js";

const t = useCmsApp("uploads", { CMS_MAX_INLINE_BYTES: "1024" }, { transport: "in-process" });

const fields = { resourceAuthor: "Uploader", resourceTenantId: "uploads" };

describe("uploadResource", () => {
  it("stores a file part with explicit fields and answers like createResource", async () => {
    const bytes = patternBytes(0, 10_000);
    const res = await upload(
      t.app,
      form(
        { ...fields, resourceName: "data.bin", resourceMediaType: "application/x-custom" },
        { bytes, name: "ignored.bin", type: "text/plain" },
      ),
    );
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body).toMatchObject({
      author: "Uploader",
      mediaType: "application/x-custom",
      size: 10_000,
      resourcesList: null,
    });
    expect(body.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    // Issue 28: the URL that names these bytes for good, as createResource gives it.
    expect((body as ResourceDto & { versionedURI: string }).versionedURI).toBe(
      `${body.resourceURI}?v=${body.sha256.slice(0, 16)}`,
    );
    expect(res.headers.get("location")).toBe(`${API}/getData/${body.resourceURI}`);
    expect(await t.cms.data(body.resourceURI)).toEqual(bytes);
  });

  it("takes the name and media type from the file part when the fields are absent", async () => {
    const res = await upload(
      t.app,
      form(fields, { bytes: new TextEncoder().encode("<svg/>"), name: "Ünïcode drawing.svg", type: "image/svg+xml" }),
    );
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body.resourceURI.endsWith("/Ünïcode drawing.svg")).toBe(true);
    expect(body.mediaType).toBe("image/svg+xml");
  });

  it("treats empty optional fields (inputs left blank in a form or the explorer) as absent", async () => {
    const blank = { ...fields, resourceName: "", resourceMediaType: "", expectedSha256: "" };
    const res = await upload(
      t.app,
      form(blank, { bytes: new TextEncoder().encode("hi"), name: "blank.txt", type: "text/plain" }),
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ mediaType: "text/plain", size: 2 });
  });

  it("streams a file far larger than the JSON and inline limits", async () => {
    const bytes = patternBytes(0, 24 * 1024 * 1024);
    const res = await upload(t.app, form({ ...fields, resourceName: "big.bin" }, { bytes }));
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body.size).toBe(bytes.length);
    expect(body.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
  });

  it("explodes an uploaded zip package", async () => {
    const res = await upload(
      t.app,
      form(
        { ...fields, resourceName: "course.zip", resourceMediaType: "application/zip" },
        { bytes: await scormZip() },
      ),
    );
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body.resourceURI.endsWith("/index.html")).toBe(true);
    expect(body.resourcesList).toHaveLength(3);
  });

  it("accepts the fields after the file part (any order), streaming the file to a staged blob", async () => {
    const bytes = patternBytes(0, 200_000);
    const res = await upload(t.app, form({}, { bytes, name: "late.bin", type: "application/x-late" }, fields));
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body).toMatchObject({ author: "Uploader", mediaType: "application/x-late", size: 200_000 });
    expect(body.resourceURI.endsWith("/late.bin")).toBe(true);
    expect(await t.cms.data(body.resourceURI)).toEqual(bytes);
  });

  it("ignores parts after the file", async () => {
    const res = await upload(
      t.app,
      form({ ...fields, resourceName: "x.txt" }, { bytes: new Uint8Array([1]) }, { trailing: "ignored" }),
    );
    expect(res.status).toBe(201);
  });
});

describe("uploadResource without resourceMediaType", () => {
  const GIF = Buffer.from("R0lGODlhAQABAAAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
  const text = (s: string) => new TextEncoder().encode(s);

  /** A form whose file part has no Content-Type header at all (FormData always sends one). */
  function untypedForm(bytes: Uint8Array) {
    const head = `--b\r\nContent-Disposition: form-data; name="resourceAuthor"\r\n\r\nUploader\r\n--b\r\nContent-Disposition: form-data; name="resourceTenantId"\r\n\r\nuploads\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="untyped"\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), bytes, Buffer.from("\r\n--b--\r\n")]);
    return { body: new Uint8Array(body), headers: { "content-type": "multipart/form-data; boundary=b" } };
  }

  it.each([
    ["a PNG sent as application/octet-stream: the bytes' type", "application/octet-stream", PNG_1x1, "image/png"],
    ["a GIF sent as application/octet-stream", "application/octet-stream", GIF, "image/gif"],
    ["a PDF sent as application/octet-stream", "application/octet-stream", text(tinyPdf()), "application/pdf"],
    ["a WAV sent as application/octet-stream", "application/octet-stream", toneWav(0.01), "audio/wav"],
    [
      "bytes without a signature as application/octet-stream",
      "application/octet-stream",
      text("hi"),
      "application/octet-stream",
    ],
    ["the part's type checked: a PNG sent as image/jpeg is a PNG", "image/jpeg", PNG_1x1, "image/png"],
    [
      "a claimed signature the bytes lack: application/octet-stream",
      "image/png",
      text("<html>hi</html>"),
      "application/octet-stream",
    ],
    [
      "a part type without a signature (text) as sent, its essence only",
      "text/plain; charset=utf-8",
      text("hi"),
      "text/plain",
    ],
  ])("stores %s", async (_what, type, bytes, expected) => {
    const res = await upload(t.app, form(fields, { bytes, name: "f", type }));
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body.mediaType).toBe(expected);
    const data = await t.app.fetch(t.app.url(`${API}/getData/${body.resourceURI}`));
    expect(data.headers.get("content-type")?.split(";")[0]).toBe(expected);
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(new Uint8Array(bytes));
  });

  it("sniffs a file part sent with no Content-Type", async () => {
    const png = untypedForm(PNG_1x1);
    expect(await (await upload(t.app, png.body, png.headers)).json()).toMatchObject({ mediaType: "image/png" });
    const plain = untypedForm(text("plain words"));
    const res = await upload(t.app, plain.body, plain.headers);
    expect(await res.json()).toMatchObject({ mediaType: "application/octet-stream" });
  });

  it("sniffs a file staged before its fields", async () => {
    const res = await upload(
      t.app,
      form({}, { bytes: PNG_1x1, name: "late.png", type: "application/octet-stream" }, fields),
    );
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ mediaType: "image/png", size: PNG_1x1.length });
  });

  it("stores a zip it was not told is one as application/zip, without making a package", async () => {
    const zip = await scormZip();
    const res = await upload(t.app, form(fields, { bytes: zip, name: "course.zip", type: "application/octet-stream" }));
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ mediaType: "application/zip", resourcesList: null, size: zip.length });
  });

  it("explodes a zip whose part says application/zip (the client's own type)", async () => {
    const res = await upload(t.app, form(fields, { bytes: await scormZip(), name: "c.zip", type: "application/zip" }));
    expect(res.status).toBe(201);
    const body = (await res.json()) as ResourceDto;
    expect(body.resourceURI.endsWith("/index.html")).toBe(true);
    expect(body.resourcesList).toHaveLength(3);
  });
});
