/**
 * Direct uploads on buckets (docs/direct-storage.md), the real app over 127.0.0.1: on Ceph RGW the
 * URL is a presigned PUT the engine checks itself (test/direct/presign-rgw.test.ts shows it refusing
 * other bytes), so completion copies inside the bucket; on s3rver, which checks no signature, the
 * service reads the object once at completion and refuses other bytes there.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto } from "../helpers/cms-client.js";
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
