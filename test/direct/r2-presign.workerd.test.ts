/**
 * Upload URLs and direct reads on Workers with R2 (docs/direct-storage.md "Workers on R2"): the bundle
 * as deployed, in workerd, with the CMS_R2_* settings naming R2's S3 API. That API is the one part
 * simulated (test/helpers/r2-s3-api.ts: Miniflare has none), over the same Miniflare R2 bucket the
 * Worker's binding reads, on 127.0.0.1; it checks every signature the Worker makes. Run twice: once
 * refusing a wrong signed payload hash (completion then copies in the bucket through the S3 API),
 * once not (the Worker reads the object once through its binding and refuses other bytes itself).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem } from "../helpers/cms-client.js";
import { expectDirectRead } from "../helpers/direct-read.js";
import {
  miniflareBucket,
  R2_API_ACCESS_KEY_ID,
  R2_API_SECRET,
  type R2S3Api,
  startR2S3Api,
} from "../helpers/r2-s3-api.js";
import { startBundledWorkerd, type WorkerdServer } from "../helpers/workerd.js";

const BUCKET = "cms-r2";
const READ_MIN = 2048;
const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (size: number, seed: string) =>
  new TextEncoder().encode(`${seed} ${crypto.randomUUID()} `.repeat(Math.ceil(size / 20))).subarray(0, size);

interface Ticket {
  uploadId: string;
  method: "PUT" | null;
  url: string;
  headers: Record<string, string>;
}

for (const enforcePayloadHash of [true, false]) {
  describe(`Workers on R2 with upload URLs (the S3 API ${enforcePayloadHash ? "refuses" : "stores"} a wrong payload hash)`, () => {
    let api: R2S3Api;
    let worker: WorkerdServer;
    beforeAll(async () => {
      api = await startR2S3Api({ bucketName: BUCKET, enforcePayloadHash });
      worker = await startBundledWorkerd({
        bindings: {
          CMS_LOG_LEVEL: "error",
          CMS_R2_ACCESS_KEY_ID: R2_API_ACCESS_KEY_ID,
          CMS_R2_SECRET_ACCESS_KEY: R2_API_SECRET,
          CMS_R2_S3_ENDPOINT: api.endpoint,
          CMS_R2_BUCKET: BUCKET,
          CMS_DIRECT_READ_MIN_BYTES: String(READ_MIN),
        },
      });
      await api.attach(worker.mf);
    }, 60_000);
    afterAll(async () => {
      await worker?.close();
      await api?.close();
    });

    const post = (verb: string, body: unknown) =>
      fetch(`${worker.url}${API}/${verb}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    async function ticket(bytes: Uint8Array, name = "direct.bin"): Promise<Ticket> {
      const res = await post("createUploadURL", {
        resourceName: name,
        resourceTenantId: "r2",
        resourceAuthor: "Uploader",
        size: bytes.length,
        sha256: hex(bytes),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as Ticket;
    }
    const send = (t: Ticket, body: Uint8Array) =>
      fetch(t.url, { method: "PUT", headers: t.headers, body: body as BodyInit });
    const complete = (uploadId: string) => post("completeUpload", { uploadId });
    const objectKeys = async (prefix: string) =>
      (await (await miniflareBucket(worker.mf)).list({ prefix })).objects.map((o) => o.key);

    it("the URL is a presigned PUT on the S3 API; the bytes land in the binding's bucket and become the resource", async () => {
      const bytes = bytesOf(READ_MIN + 500, "through R2");
      const t = await ticket(bytes);
      expect(t.method).toBe("PUT");
      expect(new URL(t.url).origin).toBe(api.endpoint);
      expect(new URL(t.url).pathname).toBe(`/${BUCKET}/direct/${t.uploadId}`);
      const put = await send(t, bytes);
      expect(put.status, await put.clone().text()).toBe(200);
      const done = await complete(t.uploadId);
      expect(done.status, await done.clone().text()).toBe(201);
      const resource = (await done.json()) as { size: number; sha256: string };
      expect(resource).toMatchObject({ size: bytes.length, sha256: hex(bytes) });
      // Completion copied through the S3 API only where the engine's own check was trusted.
      expect(api.requests.some((r) => r.startsWith(`PUT /${BUCKET}/t/`))).toBe(enforcePayloadHash);
      expect(await objectKeys("direct/")).toEqual([]);

      // getData: a 307 to a presigned GET on the S3 API (above READ_MIN); HEAD and ranges as on Node.
      const location = `${worker.url}${done.headers.get("location")}`;
      const head = await fetch(location, { method: "HEAD" });
      expect(head.status).toBe(200);
      await expectDirectRead(await fetch(location, { redirect: "manual" }), api.endpoint, head, bytes);
      const part = await fetch(location, { headers: { range: "bytes=10-19" } });
      expect(part.status).toBe(206);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(10, 20));
    });

    it("the library page's CSP lets the browser send to the S3 API's origin (docs/direct-storage.md)", async () => {
      const page = await fetch(`${worker.url}/library`);
      await page.body?.cancel();
      expect(page.headers.get("content-security-policy")).toContain(`; connect-src 'self' ${api.endpoint}; `);
    });

    it("small content is answered by the Worker itself", async () => {
      const bytes = bytesOf(100, "small");
      const t = await ticket(bytes);
      expect((await send(t, bytes)).status).toBe(200);
      const done = await complete(t.uploadId);
      expect(done.status).toBe(201);
      const res = await fetch(`${worker.url}${done.headers.get("location")}`, { redirect: "manual" });
      expect(res.status).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
    });

    it("more bytes than declared are refused by the signature; other bytes never become a resource", async () => {
      const bytes = bytesOf(300, "declared");
      const t = await ticket(bytes);
      const longer = await send(t, bytesOf(301, "declared"));
      expect(longer.status).toBe(403); // Content-Length is signed
      const forged = new URL(t.url);
      forged.pathname = `/${BUCKET}/t/forged`; // another key under the same signature
      expect((await fetch(forged, { method: "PUT", headers: t.headers, body: bytes as BodyInit })).status).toBe(403);
      await expectProblem(await complete(t.uploadId), 409, "UPLOAD_INCOMPLETE");
      const other = new Uint8Array(bytes);
      other[0] = (other[0] ?? 0) ^ 1;
      const put = await send(t, other);
      if (enforcePayloadHash) {
        expect(put.status).toBe(400);
        await expectProblem(await complete(t.uploadId), 409, "UPLOAD_INCOMPLETE");
      } else {
        expect(put.status).toBe(200);
        await expectProblem(await complete(t.uploadId), 422, "DIGEST_MISMATCH");
        await expectProblem(await complete(t.uploadId), 404, "NOT_FOUND");
        expect(await objectKeys(`direct/${t.uploadId}`)).toEqual([]);
      }
    });

    it("two completions racing create one resource; the same content again moves nothing", async () => {
      const bytes = bytesOf(700, "raced");
      const t = await ticket(bytes);
      expect((await send(t, bytes)).status).toBe(200);
      const answers = await Promise.all([complete(t.uploadId), complete(t.uploadId)]);
      expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
      for (const r of answers) await r.body?.cancel();
      const again = await ticket(bytes, "again.bin");
      expect(again).toMatchObject({ method: null, url: null });
      const done = await complete(again.uploadId);
      expect(done.status, await done.clone().text()).toBe(201);
    });
  });
}
