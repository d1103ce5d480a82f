/**
 * The library page's CSP lets it send files to where createUploadURL points (docs/direct-storage.md
 * "Browsers"): the bucket's origin as each driver signs it, taken from the store, and nothing on
 * stores whose upload URL is the service's own. The rest of the policy stays as it was, and nothing a
 * request carries can add an origin.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { libraryPage } from "../../src/routes/library/page.js";
import { uploadOrigins } from "../../src/routes/library/index.js";
import { originSource } from "../../src/routes/page-policy.js";
import { parseBlobKey } from "../../src/storage/keys.js";
import { createCachedBlobStore } from "../../src/storage/drivers/cached.js";
import { createFsBlobStore } from "../../src/storage/drivers/fs.js";
import { createMemoryBlobStore } from "../../src/storage/drivers/memory.js";
import { createR2BlobStore, type R2BucketLike } from "../../src/storage/drivers/r2.js";
import { createS3BlobStore, createS3DirectStorage } from "../../src/storage/drivers/s3.js";
import type { BlobStore } from "../../src/storage/blob-store.js";
import { API } from "../helpers/cms-client.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const KEYS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const SHA = "a".repeat(64);
const settings = {
  apiPrefix: API,
  tenantClaim: null,
  maxLinkSeconds: 3600,
  previewPreset: null,
  roles: null,
};
const cspOf = (origins: string[]) =>
  libraryPage({ settings, auth: null, contentOrigins: [], uploadOrigins: origins }).csp;

/** The origin of the URL createUploadURL would hand out for a new upload on `store`. */
async function presignedOrigin(store: BlobStore): Promise<string> {
  const put = await store.direct!.presignPut(parseBlobKey("direct/0123"), {
    size: 1,
    sha256: SHA,
    expiresInSeconds: 60,
  });
  return new URL(put.url).origin;
}

describe("uploadOrigins: where each store's upload URLs point besides the service", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "upload-origins-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("fs, memory, R2 without access keys: none (their upload URL is the service's own)", async () => {
    expect(uploadOrigins(await createFsBlobStore({ root: dir }))).toEqual([]);
    expect(uploadOrigins(createMemoryBlobStore())).toEqual([]);
    expect(uploadOrigins(createR2BlobStore({} as R2BucketLike))).toEqual([]);
  });

  it("S3 path-style (as the service configures it): the endpoint's origin, path prefix dropped", async () => {
    const store = createS3BlobStore({ endpoint: "https://gw.example:8443/storage", bucket: "blobs", ...KEYS });
    expect(uploadOrigins(store)).toEqual(["https://gw.example:8443"]);
    expect(await presignedOrigin(store)).toBe("https://gw.example:8443");
  });

  it("S3 virtual-hosted: the bucket's own host", async () => {
    const store = createS3BlobStore({
      endpoint: "https://s3.eu-west-1.amazonaws.com",
      bucket: "media",
      forcePathStyle: false,
      ...KEYS,
    });
    expect(uploadOrigins(store)).toEqual(["https://media.s3.eu-west-1.amazonaws.com"]);
    expect(await presignedOrigin(store)).toBe("https://media.s3.eu-west-1.amazonaws.com");
  });

  it("R2 with access keys: the account's S3 endpoint", async () => {
    const direct = createS3DirectStorage({
      endpoint: "https://0123abcd.r2.cloudflarestorage.com",
      bucket: "cms",
      ...KEYS,
    });
    const store = createR2BlobStore({} as R2BucketLike, { direct });
    expect(uploadOrigins(store)).toEqual(["https://0123abcd.r2.cloudflarestorage.com"]);
    expect(await presignedOrigin(store)).toBe("https://0123abcd.r2.cloudflarestorage.com");
  });

  it("through the small-blob cache in front of a store: the store's", () => {
    const s3 = createS3BlobStore({ endpoint: "http://127.0.0.1:9000", bucket: "blobs", ...KEYS });
    const cached = createCachedBlobStore(s3, { maxBytes: 1024, maxEntryBytes: 64 });
    expect(uploadOrigins(cached)).toEqual(["http://127.0.0.1:9000"]);
    expect(
      uploadOrigins(createCachedBlobStore(createMemoryBlobStore(), { maxBytes: 1024, maxEntryBytes: 64 })),
    ).toEqual([]);
  });
});

describe("the library page's CSP with an upload origin", () => {
  it("adds the origin to connect-src and nothing else changes", () => {
    const without = cspOf([]);
    expect(without).toContain("connect-src 'self'; ");
    expect(cspOf(["https://media.s3.eu-west-1.amazonaws.com"])).toBe(
      without.replace("connect-src 'self'; ", "connect-src 'self' https://media.s3.eu-west-1.amazonaws.com; "),
    );
  });

  it("refuses anything but a plain http(s) origin: no CSP syntax rides in on a bucket name", () => {
    for (const bad of [
      "http://a;b.s3.example.com", // what a virtual-hosted bucket named "a;b" gives
      "http://a,'self'.s3.example.com",
      "http://a*.s3.example.com",
      "https://s3.example.com/path",
      "https://s3.example.com 'unsafe-inline'",
      "*",
      "'self'",
      "data:",
      "javascript://s3.example.com",
      "",
    ]) {
      expect(() => originSource(bad), bad).toThrow(RangeError);
    }
    for (const good of ["http://127.0.0.1:9000", "https://0123abcd.r2.cloudflarestorage.com", "http://[::1]:9000"]) {
      expect(originSource(good)).toBe(good);
    }
    const odd = createS3BlobStore({
      endpoint: "https://s3.example.com",
      bucket: "a;b",
      forcePathStyle: false,
      ...KEYS,
    });
    expect(() => cspOf(uploadOrigins(odd))).toThrow(RangeError);
  });
});

describe("GET /library on the running app", () => {
  let s3: S3TestServer;
  let onS3: TestApp;
  let onFs: TestApp;
  let readingDirect: TestApp;
  beforeAll(async () => {
    s3 = await startS3Server();
    [onS3, onFs, readingDirect] = await Promise.all([
      startTestApp(s3Settings(s3), { transport: "in-process" }),
      startTestApp({}, { transport: "in-process" }),
      // A deployment of its own on the bucket (its own prefix: the store has one owner).
      startTestApp(
        { ...s3Settings(s3), CMS_S3_PREFIX: "reading-direct/", CMS_DIRECT_READ_MIN_BYTES: "1024" },
        { transport: "in-process" },
      ),
    ]);
  });
  afterAll(async () => {
    await readingDirect?.close();
    await onS3?.close();
    await onFs?.close();
    await s3?.close();
  });

  const csp = async (app: TestApp, init?: RequestInit, path = "/library") => {
    const res = await app.fetch(path, init);
    expect(res.status).toBe(200);
    await res.body?.cancel();
    return res.headers.get("content-security-policy") as string;
  };

  /** Each policy in full: the fs one's connect-src is 'self' alone, the S3 one's adds the endpoint. */
  const onFsPolicy = () => cspOf([]);
  const onS3Policy = () => {
    const policy = cspOf([s3.endpoint]);
    expect(policy).toContain(`; connect-src 'self' ${s3.endpoint}; `);
    return policy;
  };

  it("on fs: connect-src is this origin only", async () => {
    expect(await csp(onFs)).toBe(onFsPolicy());
    expect(await csp(onFs)).toContain("; connect-src 'self'; ");
  });

  it("on S3: connect-src adds the origin createUploadURL's URL is on, and only that", async () => {
    expect(await csp(onS3)).toBe(onS3Policy());
    const res = await onS3.fetch(`${API}/createUploadURL`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceName: "big.bin",
        resourceTenantId: "media",
        resourceAuthor: "Uploader",
        size: 1,
        sha256: SHA,
      }),
    });
    expect(res.status).toBe(201);
    const { url } = (await res.json()) as { url: string };
    expect(new URL(url).origin).toBe(s3.endpoint);
  });

  it("no request changes it: host, forwarded host, origin, referer, query", async () => {
    const attacker = "https://evil.example";
    const tries: [RequestInit, string][] = [
      [{ headers: { host: "evil.example" } }, "/library"],
      [{ headers: { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" } }, "/library"],
      [{ headers: { origin: attacker, referer: `${attacker}/` } }, "/library"],
      [{}, `/library?endpoint=${encodeURIComponent(attacker)}&uploadOrigin=${encodeURIComponent(attacker)}`],
    ];
    for (const [init, path] of tries) {
      expect(await csp(onS3, init, path)).toBe(onS3Policy());
      expect(await csp(onFs, init, path)).toBe(onFsPolicy());
    }
  });

  it("with direct reads on: previews (img, media, frames) may load from the bucket getData redirects to", async () => {
    const policy = await csp(readingDirect);
    for (const directive of ["img-src", "media-src", "frame-src"]) {
      expect(policy).toContain(`${directive} 'self' ${s3.endpoint}`);
      expect(await csp(onS3)).toContain(`${directive} 'self'`);
      expect(await csp(onS3)).not.toContain(`${directive} 'self' ${s3.endpoint}`);
    }
    expect(policy).toContain(`; connect-src 'self' ${s3.endpoint}; `);
  });
});
