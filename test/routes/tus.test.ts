/**
 * tus 1.0 on the real server, request by request (the real tus-js-client, cut connections and a
 * restart are in test/hardening/tus-resume.test.ts): creation, HEAD, PATCH, checksum, termination,
 * expiration, and the finished upload as an ordinary resource.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { API, expectProblem, tableCounts, useCmsApp } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { infoJsonZip } from "../helpers/packages.js";

const LIMIT = 1024 * 1024;
/** The app's clock: expiry tests move it instead of sleeping past CMS_TUS_EXPIRY_SECONDS. */
const time = fakeClock();
const t = useCmsApp(
  "tus",
  { CMS_MAX_RESOURCE_BYTES: String(LIMIT), CMS_TUS_EXPIRY_SECONDS: "2" },
  { clock: time.clock, transport: "in-process" },
);

const b64 = (text: string) => Buffer.from(text).toString("base64");
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(",");
const FIELDS = { resourceTenantId: "tus", filename: "t.bin", filetype: "application/octet-stream", author: "Tus" };
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest();

const endpoint = () => t.app.url(`${API}/uploads`);
async function create(
  length: number,
  fields: Record<string, string> = FIELDS,
  init: RequestInit = {},
): Promise<string> {
  const res = await t.app.fetch(endpoint(), {
    method: "POST",
    ...init,
    headers: {
      ...TUS,
      "upload-length": String(length),
      "upload-metadata": metadata(fields),
      ...(init.headers as Record<string, string>),
    },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  expect(res.headers.get("tus-resumable")).toBe("1.0.0");
  return t.app.url(res.headers.get("location") as string);
}
const patch = (url: string, offset: number, body: Uint8Array | string, headers: Record<string, string> = {}) =>
  t.app.fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": String(offset), ...headers },
    body: body as BodyInit,
  });
const head = (url: string) => t.app.fetch(url, { method: "HEAD", headers: TUS });

/** Files under the volume that hold parts of the upload at `url`. */
async function partFiles(url: string): Promise<string[]> {
  const id = url.slice(url.lastIndexOf("/") + 1);
  const entries = await readdir(t.app.volume, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && `${e.parentPath}/`.includes(`/tus/${id}/`)).map((e) => e.name);
}

describe("tus core and extensions", () => {
  it("OPTIONS lists the version, extensions, max size and checksum algorithm", async () => {
    const res = await t.app.fetch(endpoint(), { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(Object.fromEntries(res.headers)).toMatchObject({
      "tus-resumable": "1.0.0",
      "tus-version": "1.0.0",
      "tus-extension": "creation,creation-with-upload,termination,expiration,checksum",
      "tus-max-size": String(LIMIT),
      "tus-checksum-algorithm": "sha256",
    });
  });

  it("creation, HEAD and PATCH in pieces; the last PATCH answers 201 with the resource", async () => {
    const url = await create(11);
    let res = await head(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("upload-offset")).toBe("0");
    expect(res.headers.get("upload-length")).toBe("11");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(new Date(res.headers.get("upload-expires") as string).getTime()).toBeGreaterThan(time.nowMs()); // on the app's clock

    res = await patch(url, 0, "hello ");
    expect(res.status).toBe(204);
    expect(res.headers.get("upload-offset")).toBe("6");
    await expectProblem(await patch(url, 3, "lo wo"), 409, "CONFLICT");
    expect((await head(url)).headers.get("upload-offset")).toBe("6");

    res = await patch(url, 6, "world");
    expect(res.status).toBe(201);
    expect(res.headers.get("upload-offset")).toBe("11");
    const created = (await res.json()) as {
      resourceURI: string;
      versionedURI: string;
      sha256: string;
      size: number;
      author: string;
      mediaType: string;
    };
    expect(created.versionedURI).toBe(`${created.resourceURI}?v=${sha256("hello world").toString("hex").slice(0, 16)}`);
    expect(created).toMatchObject({
      size: 11,
      sha256: sha256("hello world").toString("hex"),
      author: "Tus",
      mediaType: "application/octet-stream",
    });
    expect(res.headers.get("location")).toBe(`${API}/getData/${created.resourceURI}`);
    const data = await t.app.fetch(t.app.url(`${API}/getData/${created.resourceURI}`));
    expect(await data.text()).toBe("hello world");
    expect(data.headers.get("repr-digest")).toBe(`sha-256=:${sha256("hello world").toString("base64")}:`);

    // A client that lost the last answer learns from HEAD that the upload is complete; no parts are left.
    res = await head(url);
    expect(res.headers.get("upload-offset")).toBe("11");
    expect(await partFiles(url)).toEqual([]);
  });

  it("creation-with-upload: the POST carries the whole file", async () => {
    const res = await t.app.fetch(endpoint(), {
      method: "POST",
      headers: {
        ...OCTETS,
        "upload-length": "5",
        "upload-metadata": metadata({ ...FIELDS, filename: "w.txt", filetype: "text/plain" }),
      },
      body: "whole",
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toMatch(/\/uploads\/[0-9a-f]{32}$/);
    expect(res.headers.get("upload-offset")).toBe("5");
    expect(((await res.json()) as { resourceURI: string }).resourceURI).toMatch(/-tus\/w\.txt$/);
  });

  it("a zip package explodes as with uploadResource", async () => {
    const zip = await infoJsonZip();
    const url = await create(zip.byteLength, { ...FIELDS, filename: "p.zip", filetype: "application/zip" });
    const res = await patch(url, 0, zip);
    expect(res.status).toBe(201);
    const created = (await res.json()) as { resourceURI: string; resourcesList: unknown[] };
    expect(created.resourceURI).toMatch(/\/start\.html$/);
    expect(created.resourcesList.length).toBeGreaterThan(0);
  });

  it("a bad zip → 400 at the end naming the metadata, and the upload is gone (a refusal, not a fault)", async () => {
    const counts = await tableCounts(t.app);
    const url = await create(10, { ...FIELDS, filename: "p.zip", filetype: "application/zip" });
    await expectProblem(await patch(url, 0, "not a zip!"), 400, "VALIDATION_FAILED", "/header/upload-metadata");
    expect((await head(url)).status).toBe(404);
    expect(await tableCounts(t.app)).toEqual(counts);
    expect(await partFiles(url)).toEqual([]);
  });

  it("checksum: a matching Upload-Checksum is stored, a mismatch is 460 and keeps nothing", async () => {
    const url = await create(8);
    const sum = (s: string) => `sha256 ${sha256(s).toString("base64")}`;
    const bad = await patch(url, 0, "abcd", { "upload-checksum": sum("abce") });
    expect(bad.status).toBe(460);
    expect(bad.headers.get("tus-resumable")).toBe("1.0.0");
    expect((await head(url)).headers.get("upload-offset")).toBe("0");
    await expectProblem(
      await patch(url, 0, "abcd", { "upload-checksum": "md5 AAAA" }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-checksum",
    );
    expect((await patch(url, 0, "abcd", { "upload-checksum": sum("abcd") })).headers.get("upload-offset")).toBe("4");
  });

  it("checksum by Content-Digest (RFC 9530, sha-256 of the PATCH body): checked as an Upload-Checksum", async () => {
    const url = await create(8);
    const digest = (s: string) => `sha-256=:${sha256(s).toString("base64")}:`;
    const bad = await patch(url, 0, "abcd", { "content-digest": digest("abce") });
    expect(bad.status).toBe(460);
    expect((await head(url)).headers.get("upload-offset")).toBe("0");
    await expectProblem(
      await patch(url, 0, "abcd", { "content-digest": "sha-256=:AAAA:" }),
      400,
      "VALIDATION_FAILED",
      "/header/content-digest",
    );
    const disagreeing = {
      "content-digest": digest("abcd"),
      "upload-checksum": `sha256 ${sha256("abce").toString("base64")}`,
    };
    await expectProblem(await patch(url, 0, "abcd", disagreeing), 400, "VALIDATION_FAILED", "/header/content-digest");
    expect((await patch(url, 0, "abcd", { "content-digest": digest("abcd") })).headers.get("upload-offset")).toBe("4");
  });

  it("termination: DELETE removes the upload and its stored bytes", async () => {
    const url = await create(100);
    expect((await patch(url, 0, "x".repeat(40))).status).toBe(204);
    expect((await partFiles(url)).length).toBe(1);
    const res = await t.app.fetch(url, { method: "DELETE", headers: TUS });
    expect(res.status).toBe(204);
    expect((await head(url)).status).toBe(404);
    expect(await partFiles(url)).toEqual([]);
  });

  it("expiration: an abandoned upload is gone after CMS_TUS_EXPIRY_SECONDS and collected by the next creation", async () => {
    const url = await create(100);
    await patch(url, 0, "y".repeat(10));
    expect((await partFiles(url)).length).toBe(1);
    time.advance(2100); // past CMS_TUS_EXPIRY_SECONDS on the app's clock
    expect((await head(url)).status).toBe(404);
    const next = await create(1);
    expect(await partFiles(url)).toEqual([]);
    await t.app.fetch(next, { method: "DELETE", headers: TUS });
  });

  it("refusals: protocol version, metadata, lengths, media type — with nothing stored", async () => {
    const counts = await tableCounts(t.app);
    const noVersion = await t.app.fetch(endpoint(), {
      method: "POST",
      headers: { "upload-length": "1", "upload-metadata": metadata(FIELDS) },
    });
    expect(noVersion.status).toBe(412);
    expect(noVersion.headers.get("tus-version")).toBe("1.0.0");
    const post = (headers: Record<string, string>) =>
      t.app.fetch(endpoint(), { method: "POST", headers: { ...TUS, ...headers } });
    await expectProblem(
      await post({ "upload-metadata": metadata(FIELDS) }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-length",
    );
    await expectProblem(
      await post({ "upload-length": "1", "upload-metadata": metadata({ ...FIELDS, filename: "../x" }) }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-metadata/resourceName",
    );
    await expectProblem(
      await post({ "upload-length": "1", "upload-metadata": metadata({ filename: "a" }) }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-metadata/resourceTenantId",
    );
    await expectProblem(
      await post({ "upload-length": "1", "upload-metadata": "filename !!!" }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-metadata",
    );
    await expectProblem(
      await post({ "upload-length": String(LIMIT + 1), "upload-metadata": metadata(FIELDS) }),
      413,
      "PAYLOAD_TOO_LARGE",
      "/header/upload-length",
    );

    const url = await create(4);
    await expectProblem(await patch(url, 0, "abcde"), 413, "PAYLOAD_TOO_LARGE");
    expect((await head(url)).headers.get("upload-offset")).toBe("0");
    await expectProblem(
      await t.app.fetch(url, {
        method: "PATCH",
        headers: { ...TUS, "upload-offset": "0", "content-type": "text/plain" },
        body: "ab",
      }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    await expectProblem(await head(`${endpoint()}/${"0".repeat(32)}`), 404, "NOT_FOUND").catch(() => {}); // HEAD has no body
    expect((await head(`${endpoint()}/${"0".repeat(32)}`)).status).toBe(404);
    expect(await tableCounts(t.app)).toEqual(counts);
  });

  it("an expectedSha256 in the metadata that the bytes do not match → 422 at the end, and the upload is gone", async () => {
    const counts = await tableCounts(t.app);
    const url = await create(3, { ...FIELDS, expectedSha256: sha256("abd").toString("hex") });
    await expectProblem(await patch(url, 0, "abc"), 422, "DIGEST_MISMATCH", "/header/upload-metadata/expectedSha256");
    expect((await head(url)).status).toBe(404);
    expect(await tableCounts(t.app)).toEqual(counts);
    expect(await partFiles(url)).toEqual([]);
  });
});

describe("tus on an S3 bucket (s3rver)", () => {
  it("tus-js-client uploads 12 MiB in 5 MiB PATCHes (parts are objects under tus/), none left once it completes", async () => {
    const { s3Settings, startS3Server } = await import("../helpers/s3-server.js");
    const { startTestApp } = await import("../helpers/test-app.js");
    const { Upload } = await import("tus-js-client");
    const s3 = await startS3Server();
    const app = await startTestApp({
      ...s3Settings(s3),
    });
    try {
      const bytes = Buffer.alloc(12 * 1024 * 1024);
      for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE((i * 2246822519) >>> 0, i);
      const body = await new Promise<string>((resolve, reject) => {
        new Upload(bytes, {
          endpoint: app.url(`${API}/uploads`),
          chunkSize: 5 * 1024 * 1024,
          metadata: { tenant: "tus3", filename: "s3.bin", author: "S3" },
          onError: reject,
          onSuccess: (payload) => resolve(payload.lastResponse.getBody() as string),
        }).start();
      });
      const created = JSON.parse(body) as { sha256: string; size: number; resourceURI: string };
      expect(created).toMatchObject({ size: bytes.length, sha256: sha256(bytes).toString("hex") });
      const data = new Uint8Array(
        await (await app.fetch(app.url(`${API}/getData/${created.resourceURI}`))).arrayBuffer(),
      );
      expect(sha256(data).toString("hex")).toBe(created.sha256);
      const left: string[] = [];
      for await (const key of app.deps.blobs.list("tus/")) left.push(key);
      expect(left).toEqual([]);
    } finally {
      await app.close();
      await s3.close();
    }
  }, 60_000);
});

// After the expiration test: its next creation collects a bounded number of expired uploads, these included.
describe("tus media type", () => {
  it.each([
    ["no type: the bytes' type", { filetype: undefined }, PNG_1x1, "image/png"],
    ["no type, no signature: application/octet-stream", { filetype: undefined }, "plain", "application/octet-stream"],
    ["filetype application/octet-stream: the bytes' type", {}, PNG_1x1, "image/png"],
    ["filetype checked: a PNG named image/jpeg is a PNG", { filetype: "image/jpeg" }, PNG_1x1, "image/png"],
    ["type (alias) checked the same way", { filetype: undefined, type: "image/gif" }, PNG_1x1, "image/png"],
    [
      "resourceMediaType as declared, unchecked",
      { resourceMediaType: "application/x-custom" },
      PNG_1x1,
      "application/x-custom",
    ],
  ])("the media type with %s", async (_what, change, bytes, expected) => {
    const fields = Object.fromEntries(
      Object.entries({ ...FIELDS, ...change }).filter((e): e is [string, string] => e[1] !== undefined),
    );
    const url = await create(bytes.length, fields);
    const res = await patch(url, 0, bytes);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ mediaType: expected, size: bytes.length });
  });

  it("a zip whose metadata does not say zip is stored as application/zip, not exploded", async () => {
    const zip = await infoJsonZip();
    const url = await create(zip.byteLength, { ...FIELDS, filename: "p.zip" });
    const res = await patch(url, 0, zip);
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ mediaType: "application/zip", resourcesList: null, size: zip.length });
  });
});
