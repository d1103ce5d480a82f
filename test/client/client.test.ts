/**
 * The typed client (src/client) against the real server with auth on and the real dev IdP, all on
 * 127.0.0.1: password-grant tokens with refresh, streaming upload with progress, downloads resumed
 * with Range and verified against Repr-Digest (else the ETag), typed problems, signed links, and a bundle for
 * browsers/Workers with no Node imports.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs script without types
import { buildClient } from "../../scripts/build.mjs";
import { download } from "../../src/client/download.js";
import {
  ChecksumMismatch,
  CmsProblem,
  type CmsClient,
  createCmsClient,
  passwordGrant,
  Sha256,
  staticToken,
} from "../../src/client/index.js";
import { type AuthStack, CLIENT_SECRET, startAuthStack } from "../helpers/auth-stack.js";

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const streamOf = (bytes: Uint8Array, chunk = 64 * 1024) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += chunk) c.enqueue(bytes.subarray(i, i + chunk));
      c.close();
    },
  });
const bytesOf = async (body: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(body).arrayBuffer());

let stack: AuthStack;
let client: CmsClient;
const fields = { resourceTenantId: "acme", resourceAuthor: "Ann", resourceName: "data.bin" };
beforeAll(async () => {
  stack = await startAuthStack({ CMS_LOG_LEVEL: "warn" });
  client = createCmsClient({
    baseUrl: stack.app.baseUrl,
    token: passwordGrant({
      issuer: stack.idp.issuer,
      clientId: "cms-server",
      clientSecret: CLIENT_SECRET,
      username: "acme-creator",
      password: "acme-creator",
    }),
  });
});
afterAll(() => stack?.close());

describe("createCmsClient", () => {
  it("uploads a stream with progress and downloads it verified", async () => {
    const bytes = randomBytes(1_000_000);
    const progress: number[] = [];
    const created = await client.upload(fields, streamOf(bytes), {
      size: bytes.length,
      onProgress: (sent) => progress.push(sent),
    });
    expect(created).toMatchObject({ size: bytes.length, sha256: hex(bytes), mediaType: "application/octet-stream" });
    expect(progress.length).toBeGreaterThan(5);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(bytes.length);

    const dl = await client.download(created.resourceURI);
    expect(dl).toMatchObject({ start: 0, size: bytes.length, sha256: hex(bytes), etag: `"${hex(bytes)}"` });
    expect(hex(await bytesOf(dl.body))).toBe(hex(bytes));
    expect(hex(await bytesOf((await client.download(created.resourceUID)).body))).toBe(hex(bytes)); // by UID
  });

  it("uploads a Blob", async () => {
    const created = await client.upload(
      { ...fields, resourceName: "note.txt", resourceMediaType: "text/plain" },
      new Blob(["hello blob"]),
    );
    expect(created).toMatchObject({ size: 10, mediaType: "text/plain" });
    expect(await new Response((await client.download(created.resourceURI)).body).text()).toBe("hello blob");
  });

  it("resumes with Range from the bytes held, and starts over when the content changed (If-Range)", async () => {
    const bytes = randomBytes(200_000);
    const created = await client.upload(fields, streamOf(bytes));
    const held = 123_457;
    const hash = new Sha256().update(bytes.subarray(0, held));
    const rest = await client.download(created.resourceURI, { offset: held, hash, etag: `"${created.sha256}"` });
    expect(rest).toMatchObject({ start: held, size: bytes.length });
    const tail = await bytesOf(rest.body); // verified: held bytes' hash + the rest = the resource's SHA-256
    expect(tail.length).toBe(bytes.length - held);

    const stale = await client.download(created.resourceURI, {
      offset: held,
      hash: new Sha256().update(bytes.subarray(0, held)),
      etag: '"0000"',
    });
    expect(stale.start).toBe(0);
    expect(hex(await bytesOf(stale.body))).toBe(created.sha256);
  });

  it("fails the body with ChecksumMismatch when the bytes do not hash to the resource's SHA-256", async () => {
    const bytes = randomBytes(50_000);
    const created = await client.upload(fields, streamOf(bytes));
    const wrong = new Sha256().update(randomBytes(1000));
    const dl = await client.download(created.resourceURI, { offset: 1000, hash: wrong, etag: `"${created.sha256}"` });
    await expect(bytesOf(dl.body)).rejects.toBeInstanceOf(ChecksumMismatch);
  });

  it("throws typed problems", async () => {
    const err = await client.queryResource("01m8505ec2gjyhk5ep8jcs5dwayf7d-acme").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CmsProblem);
    expect((err as CmsProblem).problem).toMatchObject({ status: 404, code: "NOT_FOUND" });

    const anonymous = createCmsClient({ baseUrl: stack.app.baseUrl });
    await expect(anonymous.listResources({ resourceTenantId: "acme" })).rejects.toMatchObject({
      status: 401,
      problem: { code: "UNAUTHENTICATED" },
    });
    await expect(anonymous.download("x/y")).rejects.toMatchObject({ status: 401 });
    const forged = createCmsClient({ baseUrl: stack.app.baseUrl, token: staticToken("not-a-jwt") });
    await expect(forged.queryResource("x")).rejects.toMatchObject({ problem: { code: "UNAUTHENTICATED" } });
  });

  it("mints signed links that work without a token", async () => {
    const created = await client.upload(
      { ...fields, resourceName: "pic.txt", resourceMediaType: "text/plain" },
      streamOf(new TextEncoder().encode("signed")),
    );
    const link = await client.signedLink(created.resourceURI, 600);
    expect(await (await fetch(link.url)).text()).toBe("signed");
    expect((await fetch(stack.app.url(`/cms/v1.0/getData/${created.resourceURI}`))).status).toBe(401);
  });

  it("refreshes the password grant's token before it expires (refresh_token)", async () => {
    const tokens = passwordGrant({
      issuer: stack.idp.issuer,
      clientId: "cms-server",
      clientSecret: CLIENT_SECRET,
      username: "acme-creator",
      password: "acme-creator",
      leewaySeconds: 1e6,
    });
    const refreshing = createCmsClient({ baseUrl: stack.app.baseUrl, token: tokens });
    const first = await tokens();
    const second = await tokens(); // always "about to expire" with this leeway: refreshed
    expect(second).not.toBe(first);
    expect((await refreshing.listResources({ resourceTenantId: "acme" })).resources.length).toBeGreaterThan(0);
  });

  it("bundles for browsers and Workers (no node: imports) and works from the bundle", async () => {
    const out = await (buildClient as (o: string) => Promise<string>)(join(stack.app.dir, "client.mjs"));
    expect(await readFile(out, "utf8")).not.toMatch(/from\s*["']node:/);
    const bundled = (await import(pathToFileURL(out).href)) as typeof import("../../src/client/index.js");
    const c = bundled.createCmsClient({
      baseUrl: stack.app.baseUrl,
      token: bundled.staticToken(await stack.passwordToken("acme-creator")),
    });
    expect((await c.listResources({ resourceTenantId: "acme", limit: 1 })).resources).toHaveLength(1);
  });
});

describe("download verifies against Repr-Digest (RFC 9530)", () => {
  // A loopback server standing in for a CMS that answers with a chosen Repr-Digest and ETag.
  const serve = async (body: Uint8Array, headers: Record<string, string>) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-length": String(body.length), ...headers });
      res.end(body);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const { port } = server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/x`, close: () => new Promise((ok) => server.close(ok)) };
  };
  const digestOf = (bytes: Uint8Array) => `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`;

  it("fails the body with ChecksumMismatch when Repr-Digest does not match, even if the ETag does", async () => {
    const bytes = randomBytes(10_000);
    const server = await serve(bytes, { etag: `"${hex(bytes)}"`, "repr-digest": digestOf(randomBytes(10)) });
    try {
      const dl = await download((req) => fetch(req), server.url);
      await expect(bytesOf(dl.body)).rejects.toBeInstanceOf(ChecksumMismatch);
    } finally {
      await server.close();
    }
  });

  it("verifies against Repr-Digest when the ETag is not a SHA-256", async () => {
    const bytes = randomBytes(10_000);
    const server = await serve(bytes, { etag: '"v1"', "repr-digest": `md5=:AAAA:, ${digestOf(bytes)}` });
    try {
      const dl = await download((req) => fetch(req), server.url);
      expect(dl.sha256).toBe(hex(bytes));
      expect(hex(await bytesOf(dl.body))).toBe(hex(bytes));
    } finally {
      await server.close();
    }
  });
});
