/**
 * The HTTP acceptance suite every runtime must pass unchanged (Node, Bun, workerd): plain HTTP
 * against a started target, no access to its deps. The target must allow fetching the loopback
 * origin (CMS_FETCH_ALLOW_PRIVATE=true); SSRF refusal differs per runtime and is tested per runtime.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Upload } from "tus-js-client";
import { type Origin, patternBytes, startOrigin } from "../helpers/origin.js";

/** CMS_PUBLIC_URL of every target: signed links are built on it, never on the request's Host. */
export const PUBLIC_URL = "https://cms.example.org";
/** CMS_QUOTA_OVERRIDES of every target: the tenant whose quota the suite exhausts. */
export const QUOTA_OVERRIDES = JSON.stringify({ "accept-quota": { resources: 2 } });

export interface AcceptanceTarget {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  baseUrl: string;
  /** Stops the target and removes whatever it created (temp dirs, processes). */
  close(): Promise<void>;
  /** The client the suite sends with, where the target needs its own (default: global fetch). */
  fetch?: typeof globalThis.fetch;
}

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
  errors?: { pointer: string; detail: string }[];
}

async function problem(res: Response): Promise<Problem> {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = (await res.json()) as Problem;
  expect(body.status).toBe(res.status);
  return body;
}

export function describeAcceptance(name: string, startTarget: () => Promise<AcceptanceTarget>) {
  describe(`HTTP acceptance: ${name}`, () => {
    let origin: Origin;
    let target: AcceptanceTarget;
    const url = (path: string) => `${target.baseUrl}${path}`;
    const fetch: typeof globalThis.fetch = (input, init) => (target.fetch ?? globalThis.fetch)(input, init);

    beforeAll(async () => {
      origin = await startOrigin();
      target = await startTarget();
    });
    afterAll(async () => {
      await target?.close();
      await origin?.close();
    });

    const create = (fields: Record<string, unknown>) =>
      fetch(
        url("/cms/v1.0/createResource"),
        json({
          resourceAuthor: "Test Author",
          resourceMediaType: "application/pdf",
          resourceName: "doc.pdf",
          resourceTenantId: "accept",
          ...fields,
        }),
      );

    describe("meta", () => {
      it("answers /apiversion with exactly the anchor's text", async () => {
        const res = await fetch(url("/apiversion"), { headers: { accept: "application/json" } });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        expect(await res.text()).toBe('{"minVersion":1.0,"maxVersion":1.0,"versionContexts":{"1.0":"/cms/v1.0"}}');
      });

      it("is ready: its database and its blob store are usable", async () => {
        const res = await fetch(url("/readyz"));
        expect(await res.json()).toEqual({ status: "ok", checks: { database: "ok", storage: "ok" } });
        expect(res.status).toBe(200);
      });

      it("answers an unknown route with a 404 problem and a request id", async () => {
        const res = await fetch(url("/nope"));
        expect(res.status).toBe(404);
        expect(await problem(res)).toMatchObject({ code: "NOT_FOUND", type: "/problems/not-found" });
        expect(res.headers.get("x-request-id")).toBeTruthy();
      });

      it("answers a wrong method with 405 and Allow", async () => {
        const res = await fetch(url("/cms/v1.0/createResource"));
        expect(res.status).toBe(405);
        expect(res.headers.get("allow")).toBe("POST");
        expect((await problem(res)).code).toBe("METHOD_NOT_ALLOWED");
      });
    });

    describe("createResource → getData", () => {
      const bytes = patternBytes(0, 10_000);
      const name = "Résumé final.pdf";
      let created: Response;
      let body: Record<string, unknown>;
      let path: string;

      beforeAll(async () => {
        created = await create({ resourceExternalURI: origin.put("accept-doc", bytes), resourceName: name });
        body = (await created.json()) as Record<string, unknown>;
        path = `/cms/v1.0/getData/${body.resourceUID}/${encodeURIComponent(name)}`;
      });

      it("answers 201 with the resource and its Location", () => {
        expect(created.status).toBe(201);
        const uid = body.resourceUID as string;
        expect(uid).toMatch(/^[0-9a-hjkmnp-tv-z]{30}-accept$/);
        expect(body).toMatchObject({
          resourceUID: uid,
          author: "Test Author",
          resourceURI: `${uid}/${name}`,
          resourcesList: null,
          mediaType: "application/pdf",
          size: 10_000,
          sha256: sha256(bytes),
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        });
        expect(created.headers.get("location")).toBe(path);
      });

      it("streams the content with its headers", async () => {
        const res = await fetch(url(path));
        expect(res.status).toBe(200);
        expect(sha256(new Uint8Array(await res.arrayBuffer()))).toBe(sha256(bytes));
        expect(res.headers.get("content-type")).toBe("application/pdf");
        expect(res.headers.get("content-length")).toBe("10000");
        expect(res.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
        expect(res.headers.get("accept-ranges")).toBe("bytes");
        expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        expect(new Date(res.headers.get("last-modified") as string).getTime()).toBeGreaterThan(0);
        expect(res.headers.get("content-disposition")).toContain("filename*=UTF-8''R%C3%A9sum%C3%A9%20final.pdf");
      });

      it("answers HEAD with the same headers and no body", async () => {
        const res = await fetch(url(path), { method: "HEAD" });
        expect(res.status).toBe(200);
        expect(res.headers.get("content-length")).toBe("10000");
        expect(res.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
        expect((await res.arrayBuffer()).byteLength).toBe(0);
      });

      it("serves a range, a suffix range and multiple ranges", async () => {
        const one = await fetch(url(path), { headers: { range: "bytes=100-199" } });
        expect(one.status).toBe(206);
        expect(one.headers.get("content-range")).toBe("bytes 100-199/10000");
        expect(new Uint8Array(await one.arrayBuffer())).toEqual(bytes.slice(100, 200));

        const suffix = await fetch(url(path), { headers: { range: "bytes=-10" } });
        expect(suffix.status).toBe(206);
        expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(bytes.slice(9990));

        const many = await fetch(url(path), { headers: { range: "bytes=0-9,-10" } });
        expect(many.status).toBe(206);
        expect(many.headers.get("content-type")).toMatch(/^multipart\/byteranges; boundary=/);
        const text = Buffer.from(await many.arrayBuffer()).toString("latin1");
        expect(text).toContain("Content-Range: bytes 0-9/10000");
        expect(text).toContain("Content-Range: bytes 9990-9999/10000");
      });

      it("answers 304, 412 and 416 to conditional and unsatisfiable requests", async () => {
        const etag = `"${sha256(bytes)}"`;
        const cached = await fetch(url(path), { headers: { "if-none-match": etag } });
        expect(cached.status).toBe(304);
        expect(cached.headers.get("etag")).toBe(etag);

        const stale = await fetch(url(path), { headers: { "if-match": '"nope"' } });
        expect(stale.status).toBe(412);
        expect((await problem(stale)).code).toBe("PRECONDITION_FAILED");

        const past = await fetch(url(path), { headers: { range: "bytes=20000-" } });
        expect(past.status).toBe(416);
        expect(past.headers.get("content-range")).toBe("bytes */10000");
        expect((await problem(past)).code).toBe("RANGE_NOT_SATISFIABLE");
      });

      it("answers 404 for an unknown UID, another tenant's UID and a wrong name", async () => {
        const uid = body.resourceUID as string;
        const shortId = uid.slice(0, uid.indexOf("-"));
        for (const wrong of [
          `/cms/v1.0/getData/${"0".repeat(30)}-accept/${encodeURIComponent(name)}`,
          `/cms/v1.0/getData/${shortId}-other/${encodeURIComponent(name)}`,
          `/cms/v1.0/getData/${uid}/other.pdf`,
        ]) {
          const res = await fetch(url(wrong));
          expect(res.status, wrong).toBe(404);
          expect((await problem(res)).code).toBe("NOT_FOUND");
        }
      });

      it("hands out a signed link that serves the content", async () => {
        const res = await fetch(
          url("/cms/v1.0/createDataLink"),
          json({ resourceURI: body.resourceURI, expiresIn: 60 }),
        );
        expect(res.status).toBe(200);
        const link = (await res.json()) as { url: string };
        const signed = new URL(link.url);
        expect(signed.origin).toBe(PUBLIC_URL);
        expect(signed.searchParams.get("signature")).toBeTruthy();
        const data = await fetch(url(`${signed.pathname}${signed.search}`));
        expect(data.status).toBe(200);
        expect(sha256(new Uint8Array(await data.arrayBuffer()))).toBe(sha256(bytes));
      });
    });

    it("never lets stored HTML run script in the API's origin: sandboxed, nosniff; PDFs stay viewable", async () => {
      const res = await create({
        resourceExternalURI: origin.put("accept-html", "<script>alert(1)</script>"),
        resourceName: "page.html",
        resourceMediaType: "text/html",
      });
      expect(res.status).toBe(201);
      const { resourceURI, resourceUID } = (await res.json()) as { resourceURI: string; resourceUID: string };
      for (const path of [
        `/cms/v1.0/getData/${resourceURI}`,
        `/cms/v1.0/getDataUuid/${resourceUID}`,
        `/cms/v1.0/getRevisionData/${resourceUID}/1`,
      ]) {
        const data = await fetch(url(path));
        expect(data.status, path).toBe(200);
        expect(data.headers.get("content-security-policy"), path).toMatch(/^sandbox; default-src 'none'/);
        expect(data.headers.get("x-content-type-options"), path).toBe("nosniff");
        await data.arrayBuffer();
      }
      const pdf = await create({
        resourceExternalURI: origin.put("accept-pdf", "%PDF-1.4\n"),
        resourceName: "view.pdf",
      });
      const { resourceURI: pdfUri } = (await pdf.json()) as { resourceURI: string };
      const view = await fetch(url(`/cms/v1.0/getData/${pdfUri}`));
      expect(view.headers.get("content-security-policy")).toBe("script-src 'none'");
      expect(view.headers.get("content-disposition")).toMatch(/^inline/);
      await view.arrayBuffer();
    });

    it("streams a 12 MiB resource in and out (multipart upload on object stores)", async () => {
      const size = 12 * MiB;
      const res = await create({
        resourceExternalURI: origin.url(`/gen/${size}`),
        resourceName: "big.bin",
        resourceMediaType: "application/octet-stream",
      });
      expect(res.status).toBe(201);
      const created = (await res.json()) as { resourceURI: string; size: number; sha256: string };
      const expected = patternBytes(0, size);
      expect(created.size).toBe(size);
      expect(created.sha256).toBe(sha256(expected));
      const data = await fetch(url(`/cms/v1.0/getData/${created.resourceURI}`));
      expect(data.headers.get("content-length")).toBe(String(size));
      expect(sha256(new Uint8Array(await data.arrayBuffer()))).toBe(created.sha256);
      const tail = await fetch(url(`/cms/v1.0/getData/${created.resourceURI}`), {
        headers: { range: `bytes=${size - 5 * MiB - 3}-` },
      });
      expect(tail.status).toBe(206);
      expect(sha256(new Uint8Array(await tail.arrayBuffer()))).toBe(sha256(expected.subarray(size - 5 * MiB - 3)));
    });

    describe("digests (RFC 9530)", () => {
      const digestField = (bytes: Uint8Array) => `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`;

      it("serves Repr-Digest, and Content-Digest when asked for", async () => {
        const bytes = patternBytes(3, 5003);
        const res = await create({
          resourceExternalURI: origin.put("digest-doc", bytes),
          resourceName: "digest.pdf",
          expectedSha256: sha256(bytes),
        });
        expect(res.status).toBe(201);
        const { resourceURI } = (await res.json()) as { resourceURI: string };
        const data = await fetch(url(`/cms/v1.0/getData/${resourceURI}`), {
          headers: { "want-content-digest": "sha-256=1" },
        });
        expect(data.headers.get("repr-digest")).toBe(digestField(bytes));
        expect(data.headers.get("content-digest")).toBe(digestField(new Uint8Array(await data.arrayBuffer())));
        const part = await fetch(url(`/cms/v1.0/getData/${resourceURI}`), { headers: { range: "bytes=0-9" } });
        expect(part.headers.get("repr-digest")).toBe(digestField(bytes));
        await part.arrayBuffer();
      });

      it("refuses content that does not match expectedSha256 with 422, storing nothing", async () => {
        const res = await create({
          resourceExternalURI: origin.put("digest-bad", "actual"),
          resourceName: "mismatch.pdf",
          expectedSha256: "0".repeat(64),
        });
        expect(res.status).toBe(422);
        expect(await problem(res)).toMatchObject({
          code: "DIGEST_MISMATCH",
          errors: [{ pointer: "/body/expectedSha256" }],
        });
        const list = await fetch(url("/cms/v1.0/listResources?resourceTenantId=accept&namePrefix=mismatch"));
        expect(((await list.json()) as { resources: unknown[] }).resources).toEqual([]);
      });
    });

    it("takes a resumable upload from the real tus-js-client in several PATCHes, and can terminate one", async () => {
      const bytes = Buffer.from(patternBytes(7, 7 + 3 * MiB));
      const body = await new Promise<string>((resolve, reject) => {
        new Upload(bytes, {
          endpoint: url("/cms/v1.0/uploads"),
          chunkSize: MiB,
          metadata: {
            resourceTenantId: "accept",
            filename: "resumable.bin",
            filetype: "application/octet-stream",
            author: "tus",
          },
          onError: reject,
          onSuccess: (payload) => resolve(payload.lastResponse.getBody() as string),
        }).start();
      });
      const created = JSON.parse(body) as { resourceURI: string; sha256: string; size: number };
      expect(created).toMatchObject({ sha256: sha256(bytes), size: bytes.byteLength });
      const data = await fetch(url(`/cms/v1.0/getData/${created.resourceURI}`));
      expect(sha256(new Uint8Array(await data.arrayBuffer()))).toBe(created.sha256);

      const tus = { "tus-resumable": "1.0.0" };
      const start = await fetch(url("/cms/v1.0/uploads"), {
        method: "POST",
        headers: {
          ...tus,
          "upload-length": "10",
          "upload-metadata": `tenant ${btoa("accept")},filename ${btoa("gone.bin")},author ${btoa("tus")}`,
        },
      });
      expect(start.status).toBe(201);
      const upload = url(start.headers.get("location") as string);
      const patch = await fetch(upload, {
        method: "PATCH",
        headers: { ...tus, "upload-offset": "0", "content-type": "application/offset+octet-stream" },
        body: "abcd",
      });
      expect(patch.headers.get("upload-offset")).toBe("4");
      expect((await fetch(upload, { method: "DELETE", headers: tus })).status).toBe(204);
      expect((await fetch(upload, { method: "HEAD", headers: tus })).status).toBe(404);
    });

    it("refuses a creation over the tenant's quota with 507, and shows the usage", async () => {
      const inQuota = (i: number) =>
        create({
          resourceTenantId: "accept-quota",
          resourceName: `q${i}.pdf`,
          resourceExternalURI: origin.put(`quota-${i}`, `q${i}`),
        });
      expect((await inQuota(1)).status).toBe(201);
      expect((await inQuota(2)).status).toBe(201);
      const over = await inQuota(3);
      expect(over.status).toBe(507);
      expect(await problem(over)).toMatchObject({ code: "QUOTA_EXCEEDED", errors: [{ pointer: "/quota/resources" }] });
      const usage = await fetch(url("/cms/v1.0/usage?resourceTenantId=accept-quota"));
      expect(await usage.json()).toMatchObject({ resources: 2, bytes: 4, limits: { resources: 2, bytes: null } });
    });

    it("rejects invalid fields with a 400 problem naming each of them", async () => {
      const res = await create({
        resourceExternalURI: origin.put("unused", "x"),
        resourceName: "../etc/passwd",
        resourceTenantId: "a/b",
      });
      expect(res.status).toBe(400);
      const p = await problem(res);
      expect(p.code).toBe("VALIDATION_FAILED");
      const pointers = p.errors?.map((e) => e.pointer) ?? [];
      expect(pointers).toEqual(expect.arrayContaining(["/json/resourceName", "/json/resourceTenantId"]));
      expect(p.detail).toContain("resourceName");
    });

    it("refuses a body that is not JSON with 415", async () => {
      const res = await fetch(url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "hi",
      });
      expect(res.status).toBe(415);
      expect((await problem(res)).code).toBe("UNSUPPORTED_MEDIA_TYPE");
    });

    describe("explorer", () => {
      it("serves the OpenAPI 3.1 document", async () => {
        const res = await fetch(url("/openapi.json"));
        expect(res.status).toBe(200);
        const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
        expect(doc.openapi).toBe("3.1.0");
        expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/apiversion", "/cms/v1.0/createResource"]));
      });

      it("serves Swagger UI with its self-hosted assets", async () => {
        const res = await fetch(url("/swagger-ui.html"));
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^text\/html/);
        const html = await res.text();
        const assets = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1] as string);
        expect(assets).toEqual(
          expect.arrayContaining([
            "/vendor/swagger-ui-dist/swagger-ui-bundle.js",
            "/vendor/swagger-ui-dist/swagger-ui.css",
          ]),
        );
        for (const asset of assets) {
          const a = await fetch(url(asset));
          expect(a.status, asset).toBe(200);
          expect((await a.arrayBuffer()).byteLength).toBeGreaterThan(500);
        }
        expect((await fetch(url("/vendor/swagger-ui-dist/package.json"))).status).toBe(404);
        expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      });
    });
  });
}
