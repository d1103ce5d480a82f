/**
 * Direct uploads on buckets (docs/direct-storage.md), the real app over 127.0.0.1: on Ceph RGW the
 * URL is a presigned PUT the engine checks itself (test/direct/presign-rgw.test.ts shows it refusing
 * other bytes), so completion copies inside the bucket; on s3rver, which checks no signature, the
 * service reads the object once at completion and refuses other bytes there.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto } from "../helpers/cms-client.js";
import { expectDirectRead } from "../helpers/direct-read.js";
import { fakeClock } from "../helpers/fake-clock.js";
import { createRgwBucket, type RgwCluster, rgwObjectKeys, rgwSettings, sharedRgw } from "../helpers/rgw.js";
import { type S3TestServer, s3Settings, startS3Server } from "../helpers/s3-server.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

interface Ticket {
  uploadId: string;
  method: "PUT" | null;
  url: string | null;
  headers: Record<string, string>;
}

const TENANT = "bucket";
const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const fresh = (label: string) => new TextEncoder().encode(`${label} ${crypto.randomUUID()}`);

function client(app: () => TestApp) {
  const post = (verb: string, body: unknown) =>
    app().fetch(app().url(`${API}/${verb}`), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return {
    post,
    async ticket(bytes: Uint8Array): Promise<Ticket> {
      const res = await post("createUploadURL", {
        resourceName: "direct.txt",
        resourceTenantId: TENANT,
        resourceAuthor: "Uploader",
        size: bytes.length,
        sha256: hex(bytes),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Ticket;
    },
    send: (ticket: Ticket, body: Uint8Array) =>
      fetch(ticket.url as string, { method: "PUT", headers: ticket.headers, body: body as BodyInit }),
    complete: (uploadId: string) => post("completeUpload", { uploadId }),
  };
}

describe("direct uploads on Ceph RGW (the engine checks the signed SHA-256)", () => {
  const BUCKET = "direct-app";
  const time = fakeClock();
  let rgw: RgwCluster;
  let app: TestApp;
  const c = client(() => app);
  beforeAll(async () => {
    rgw = await sharedRgw();
    await createRgwBucket(rgw, BUCKET);
    app = await startTestApp({ ...rgwSettings(rgw, BUCKET), CMS_UPLOAD_URL_TTL_SECONDS: "300" }, { clock: time.clock });
  }, 180_000);
  afterAll(() => app?.close());

  it("the bytes go to the bucket, completion copies them there: the resource serves them", async () => {
    const bytes = fresh("straight to RGW");
    const ticket = await c.ticket(bytes);
    expect(ticket.method).toBe("PUT");
    expect(new URL(ticket.url as string).origin).toBe(rgw.endpoint);
    const put = await c.send(ticket, bytes);
    expect(put.status).toBe(200);
    await put.body?.cancel();
    const res = await c.complete(ticket.uploadId);
    expect(res.status, await res.clone().text()).toBe(201);
    const resource = (await res.json()) as ResourceDto;
    expect(resource).toMatchObject({ size: bytes.length, sha256: hex(bytes), mediaType: "application/octet-stream" });
    const data = await app.fetch(app.url(res.headers.get("location") as string));
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(bytes);
    expect(await rgwObjectKeys(rgw, BUCKET, "direct/")).toEqual([]);
  });

  it("other bytes never land (RGW refuses them): completion is told the upload is incomplete", async () => {
    const bytes = fresh("the declared");
    const ticket = await c.ticket(bytes);
    const other = fresh("the declared").subarray(0, bytes.length);
    const put = await c.send(ticket, other);
    expect(put.status).toBe(400);
    await put.body?.cancel();
    await expectProblem(await c.complete(ticket.uploadId), 409, "UPLOAD_INCOMPLETE");
  });

  it("two completions racing create one resource; a PUT after completion is swept with the upload", async () => {
    const bytes = fresh("raced on RGW");
    const ticket = await c.ticket(bytes);
    await (await c.send(ticket, bytes)).body?.cancel();
    const answers = await Promise.all([c.complete(ticket.uploadId), c.complete(ticket.uploadId)]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    for (const r of answers) await r.body?.cancel();
    // The URL still works until it expires, but only for the same bytes, into the upload's own slot.
    const again = await c.send(ticket, bytes);
    expect(again.status).toBe(200);
    await again.body?.cancel();
    expect(await rgwObjectKeys(rgw, BUCKET, "direct/")).toEqual([`direct/${ticket.uploadId}`]);
    time.advance(300_001);
    await app.services.collector.pass();
    expect(await rgwObjectKeys(rgw, BUCKET, "direct/")).toEqual([]);
  });
});

describe("direct uploads on s3rver (checks no signature: the service reads the object once)", () => {
  let s3: S3TestServer;
  let app: TestApp;
  const c = client(() => app);
  beforeAll(async () => {
    s3 = await startS3Server();
    app = await startTestApp(s3Settings(s3));
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await s3?.close();
  });

  it("the engine does not enforce the signed hash, so other bytes are refused at completion (422) and dropped", async () => {
    expect(await app.deps.blobs.direct?.enforcesSignedSha256()).toBe(false);
    const bytes = fresh("declared on s3rver");
    const ticket = await c.ticket(bytes);
    const other = new Uint8Array(bytes);
    other[0] = (other[0] ?? 0) ^ 1;
    const put = await c.send(ticket, other);
    expect(put.status).toBe(200); // s3rver stores what the signature does not allow
    await put.body?.cancel();
    await expectProblem(await c.complete(ticket.uploadId), 422, "DIGEST_MISMATCH", "/body/uploadId");
    await expectProblem(await c.complete(ticket.uploadId), 404, "NOT_FOUND");
    expect((await s3.objectKeys(s3.bucket)).filter((k) => k.startsWith("direct/"))).toEqual([]);
  });

  it("the declared bytes become the resource", async () => {
    const bytes = fresh("honest on s3rver");
    const ticket = await c.ticket(bytes);
    await (await c.send(ticket, bytes)).body?.cancel();
    const res = await c.complete(ticket.uploadId);
    expect(res.status, await res.clone().text()).toBe(201);
    const data = await app.fetch(app.url(res.headers.get("location") as string));
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(bytes);
  });
});

describe("direct reads on Ceph RGW (CMS_DIRECT_READ_MIN_BYTES)", () => {
  const BUCKET = "direct-reads";
  const MIN = 1000;
  let rgw: RgwCluster;
  let app: TestApp;
  const c = client(() => app);
  beforeAll(async () => {
    rgw = await sharedRgw();
    await createRgwBucket(rgw, BUCKET);
    app = await startTestApp({ ...rgwSettings(rgw, BUCKET), CMS_DIRECT_READ_MIN_BYTES: String(MIN) });
  }, 180_000);
  afterAll(() => app?.close());

  const bytesOf = (size: number, seed: string) => {
    const text = `${seed} ${crypto.randomUUID()} `.repeat(Math.ceil(size / 40));
    return new TextEncoder().encode(text).subarray(0, size);
  };
  async function create(bytes: Uint8Array, mediaType: string): Promise<{ location: string; versionedURI: string }> {
    const res = await c.post("createResource", {
      resourceName: "page",
      resourceTenantId: TENANT,
      resourceAuthor: "Reader",
      resourceMediaType: mediaType,
      resourceBinary: Buffer.from(bytes).toString("base64"),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const body = (await res.json()) as { versionedURI: string };
    return { location: res.headers.get("location") as string, versionedURI: body.versionedURI };
  }
  const get = (path: string, headers: Record<string, string> = {}, redirect: RequestRedirect = "manual") =>
    fetch(app.url(path), { headers, redirect });

  it("large content: 307 to a presigned GET (≤ 300 s) that answers with the service's type, disposition and caching", async () => {
    const bytes = bytesOf(5000, "large");
    const { location } = await create(bytes, "text/html");
    const head = await fetch(app.url(location), { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("5000");
    await expectDirectRead(await get(location), rgw.endpoint, head, bytes);
  });

  it("ranges go through the redirect; 304 and small content stay the service's", async () => {
    const bytes = bytesOf(4000, "ranged");
    const { location } = await create(bytes, "application/octet-stream");
    const part = await get(location, { range: "bytes=100-199" }, "follow");
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 100-199/4000");
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(100, 200));
    const etag = (await fetch(app.url(location), { method: "HEAD" })).headers.get("etag") as string;
    const notModified = await get(location, { "if-none-match": etag });
    expect(notModified.status).toBe(304);
    const small = bytesOf(MIN - 1, "small");
    const smallRes = await get((await create(small, "application/octet-stream")).location);
    expect(smallRes.status).toBe(200);
    expect(new Uint8Array(await smallRes.arrayBuffer())).toEqual(small);
  });

  it("a versionedURI redirects after its checks, and the bucket answers with its immutable caching", async () => {
    const bytes = bytesOf(3000, "versioned");
    const { location, versionedURI } = await create(bytes, "application/octet-stream");
    const version = new URL(versionedURI, "http://x").searchParams.get("v");
    const res = await get(`${location}?v=${version}`);
    expect(res.status).toBe(307);
    const followed = await fetch(res.headers.get("location") as string);
    expect(followed.headers.get("cache-control")).toMatch(/immutable/);
    expect(new Uint8Array(await followed.arrayBuffer())).toEqual(bytes);
    const unknownVersion = await get(`${location}?v=${"0".repeat(version?.length ?? 16)}`);
    expect(unknownVersion.status).toBe(404);
    await unknownVersion.body?.cancel();
  });
});
