/**
 * RFC 9530 digests end to end on the real server: Repr-Digest on every way content is served, and
 * announced digests checked on every way content arrives — a mismatch is 422 DIGEST_MISMATCH with
 * nothing committed (no row, no blob, no temp file).
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, expectProblem, form, tableCounts, upload, useCmsApp } from "../helpers/cms-client.js";
import { infoJsonZip } from "../helpers/packages.js";

const t = useCmsApp("dig", { CMS_PUBLIC_URL: "http://127.0.0.1:1" }, { transport: "in-process" });

const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest();
const hex = (bytes: Uint8Array | string) => sha(bytes).toString("hex");
const field = (bytes: Uint8Array | string) => `sha-256=:${sha(bytes).toString("base64")}:`;
const field512 = (bytes: Uint8Array | string) => `sha-512=:${createHash("sha512").update(bytes).digest("base64")}:`;

/** Every file under the app's folder (volume and its temp folders, database excluded). */
async function allVolumeFiles(): Promise<string[]> {
  const entries = await readdir(t.app.volume, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => `${e.parentPath}/${e.name}`)
    .sort();
}

/** Asserts `act` is refused with 422 DIGEST_MISMATCH naming `pointer`, and that nothing was left behind. */
async function refusedWithNothingCommitted(act: () => Promise<Response>, pointer: string) {
  const [files, counts] = [await allVolumeFiles(), await tableCounts(t.app)];
  await expectProblem(await act(), 422, "DIGEST_MISMATCH", pointer);
  expect(await allVolumeFiles()).toEqual(files);
  expect(await tableCounts(t.app)).toEqual(counts);
}

/** An origin that sends the Repr-Digest it is given for each path (a real server on loopback). */
let origin: { url: (path: string) => string; close: () => void };
const served = new Map<string, { body: Uint8Array; reprDigest?: string }>();
beforeAll(async () => {
  const server = createServer((req, res) => {
    const entry = served.get(req.url ?? "");
    if (!entry) return void res.writeHead(404).end();
    res.writeHead(200, {
      "content-length": entry.body.byteLength,
      ...(entry.reprDigest ? { "repr-digest": entry.reprDigest } : {}),
    });
    res.end(entry.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  origin = { url: (path) => `${base}${path}`, close: () => server.close() };
});
afterAll(() => origin.close());

describe("Repr-Digest on every way content is served", () => {
  it("getData (full, HEAD, range, multipart), getDataUuid, POST getData, revisions, package files, signed links", async () => {
    const body = "digest me, all of me";
    const created = await t.cms.create({ resourceName: "d.txt" }, body);
    const expected = field(body);
    const get = (path: string, init: RequestInit = {}) =>
      t.app.fetch(t.app.url(path.startsWith("/") ? path : `${API}/${path}`), init);
    const answers = [
      await get(`getData/${created.resourceURI}`),
      await get(`getData/${created.resourceURI}`), // the second read is answered by the Node fast path (cached)
      await get(`getData/${created.resourceURI}`, { method: "HEAD" }),
      await get(`getData/${created.resourceURI}`, { headers: { range: "bytes=0-5" } }),
      await get(`getData/${created.resourceURI}`, { headers: { range: "bytes=0-1,4-5" } }),
      await get(`getMultiPartData/${created.resourceURI}`),
      await get(`getDataUuid/${created.resourceUID}`),
      await t.cms.post("getData", { resourceUID: created.resourceUID }),
      await get(`getRevisionData/${created.resourceUID}/1`),
    ];
    const link = await t.cms.post("createDataLink", { resourceURI: created.resourceURI, expiresIn: 60 });
    const { url } = (await link.json()) as { url: string };
    answers.push(await get(new URL(url).pathname + new URL(url).search));
    for (const res of answers) {
      expect([200, 206], res.url).toContain(res.status);
      expect(res.headers.get("repr-digest"), res.url).toBe(expected);
      await res.arrayBuffer();
    }

    const pkg = await t.cms.create(
      { resourceName: "p.zip", resourceMediaType: "application/zip" },
      await infoJsonZip(),
    );
    const page = await get(`getData/${pkg.resourceURI}`);
    expect(page.headers.get("repr-digest")).toBe(field("<html>start</html>"));
    await page.arrayBuffer();
  });

  it("Want-Content-Digest gets Content-Digest on a full answer (matching the bytes), not on a range", async () => {
    const body = "content digest";
    const created = await t.cms.create({ resourceName: "c.txt" }, body);
    const full = await t.cms.get(`getData/${created.resourceURI}`, { "want-content-digest": "sha-256=5" });
    const bytes = new Uint8Array(await full.arrayBuffer());
    expect(full.headers.get("content-digest")).toBe(field(bytes));
    expect(full.headers.get("content-digest")).toBe(field(body));
    const part = await t.cms.get(`getData/${created.resourceURI}`, {
      "want-content-digest": "sha-256=5",
      range: "bytes=1-3",
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-digest")).toBeNull();
    await part.arrayBuffer();
  });
});

describe("announced digests on every way content arrives", () => {
  it("createResource inline: expectedSha256 that matches is stored; one that does not → 422, nothing committed", async () => {
    const ok = await t.cms.create({ resourceName: "ok.txt", expectedSha256: hex("good").toUpperCase() }, "good");
    expect(ok.sha256).toBe(hex("good"));
    await refusedWithNothingCommitted(
      () => t.cms.postCreate({ resourceName: "bad.txt", expectedSha256: hex("other") }, "good"),
      "/body/expectedSha256",
    );
  });

  it("request-level Content-Digest / Repr-Digest on a JSON body is checked against the body's bytes, never ignored", async () => {
    const json = (fields: Record<string, unknown>) =>
      JSON.stringify({
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceTenantId: "dig",
        resourceBinary: btoa("json body"),
        ...fields,
      });
    const post = (body: string, headers: Record<string, string>) =>
      t.app.fetch(t.app.url(`${API}/createResource`), {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    const good = json({ resourceName: "cd.txt" });
    expect((await post(good, { "content-digest": field(good) })).status).toBe(201);
    const alsoGood = json({ resourceName: "rd.txt" });
    expect((await post(alsoGood, { "repr-digest": `${field512(alsoGood)}, ${field(alsoGood)}` })).status).toBe(201);
    const only512 = json({ resourceName: "rd512.txt" });
    expect((await post(only512, { "content-digest": field512(only512) })).status).toBe(201);
    // Algorithms we cannot compute are ignored (RFC 9530 §4); sha-512 we can, so it is checked.
    expect((await post(json({ resourceName: "md5.txt" }), { "repr-digest": "md5=:AAAA:" })).status).toBe(201);
    const bad = json({ resourceName: "bad-cd.txt" });
    await refusedWithNothingCommitted(
      () => post(bad, { "content-digest": field(`${bad} `) }),
      "/header/content-digest",
    );
    await refusedWithNothingCommitted(
      () => post(bad, { "repr-digest": field("something else") }),
      "/header/repr-digest",
    );
    await refusedWithNothingCommitted(
      () => post(bad, { "repr-digest": `${field(bad)}, ${field512("something else")}` }),
      "/header/repr-digest",
    );
    await expectProblem(
      await post(bad, { "content-digest": "sha-256=:not base64!:" }),
      400,
      "VALIDATION_FAILED",
      "/header/content-digest",
    );
    // Any JSON endpoint, not only creations: a lock request whose digest does not match is not acted on.
    const lock = JSON.stringify({ resourceUID: "nope", author: "A" });
    await expectProblem(
      await t.app.fetch(t.app.url(`${API}/lockResourceDTO`), {
        method: "POST",
        headers: { "content-type": "application/json", "content-digest": field("{}") },
        body: lock,
      }),
      422,
      "DIGEST_MISMATCH",
      "/header/content-digest",
    );
  });

  it("request-level Content-Digest / Repr-Digest on a multipart upload cover the body as sent (sha-256, sha-512): checked as it streams, a mismatch → 422 with nothing stored", async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 13) % 251);
    // The exact bytes fetch sends: FormData serialized once (its boundary is random).
    const sent = async (name: string) => {
      const request = new Request("http://127.0.0.1/", {
        method: "POST",
        body: form({ resourceTenantId: "dig", resourceAuthor: "A", resourceName: name }, { bytes }),
      });
      return { body: Buffer.from(await request.arrayBuffer()), type: request.headers.get("content-type") as string };
    };
    const post = ({ body, type }: { body: Buffer; type: string }, headers: Record<string, string>) =>
      t.app.fetch(t.app.url(`${API}/uploadResource`), {
        method: "POST",
        headers: { "content-type": type, ...headers },
        body: new Uint8Array(body),
      });

    const a = await sent("req-256.bin");
    expect((await post(a, { "content-digest": field(a.body) })).status).toBe(201);
    const b = await sent("req-512.bin");
    expect((await post(b, { "repr-digest": field512(b.body) })).status).toBe(201);
    const c = await sent("req-both.bin");
    const both = await post(c, {
      "content-digest": `${field512(c.body)}, ${field(c.body)}`,
      "repr-digest": field(c.body),
    });
    expect(both.status).toBe(201);
    // The digest describes the request's content; the stored file is still just the file.
    const stored = await t.app.fetch(
      t.app.url(`${API}/getData/${((await both.json()) as { resourceURI: string }).resourceURI}`),
    );
    expect(Buffer.from(await stored.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);

    const d = await sent("req-bad.bin");
    await refusedWithNothingCommitted(() => post(d, { "content-digest": field(bytes) }), "/header/content-digest"); // the file's, not the body's
    await refusedWithNothingCommitted(
      () => post(d, { "repr-digest": field512(Buffer.concat([d.body, Buffer.from(" ")])) }),
      "/header/repr-digest",
    );
    await refusedWithNothingCommitted(
      () => post(d, { "content-digest": `${field(d.body)}, ${field512("other")}` }),
      "/header/content-digest",
    );
    await expectProblem(
      await post(d, { "content-digest": "sha-512=:AAAA:" }),
      400,
      "VALIDATION_FAILED",
      "/header/content-digest",
    );
  });

  it("a request-level digest on a large upload: checked only once the whole body streamed through, and a mismatch still leaves nothing", async () => {
    // Far more than any buffer on the way: the file is in storage's temp file when the mismatch shows.
    const big = new Uint8Array(24 * 1024 * 1024).map((_, i) => (i * 7 + (i >> 12)) & 0xff);
    const request = new Request("http://127.0.0.1/", {
      method: "POST",
      body: form({ resourceTenantId: "dig", resourceAuthor: "A", resourceName: "big.bin" }, { bytes: big }),
    });
    const body = new Uint8Array(await request.arrayBuffer());
    const post = (digest: string) =>
      t.app.fetch(t.app.url(`${API}/uploadResource`), {
        method: "POST",
        headers: { "content-type": request.headers.get("content-type") as string, "content-digest": digest },
        body,
      });
    await refusedWithNothingCommitted(
      () => post(field512(Buffer.concat([body, Buffer.from("x")]))),
      "/header/content-digest",
    );
    const created = await post(field(body));
    expect(created.status).toBe(201);
    expect(((await created.json()) as { sha256: string }).sha256).toBe(hex(big));
  }, 60_000);

  it("createResource inline: a malformed expectedSha256 → 400 naming it", async () => {
    await expectProblem(
      await t.cms.postCreate({ expectedSha256: "abc" }),
      400,
      "VALIDATION_FAILED",
      "/json/expectedSha256",
    );
  });

  it("createResource by URI: the origin's Repr-Digest is checked, and the client's expectedSha256", async () => {
    const bytes = new TextEncoder().encode("from the origin");
    served.set("/honest", { body: bytes, reprDigest: field(bytes) });
    served.set("/lying", { body: bytes, reprDigest: field("something else") });
    served.set("/silent", { body: bytes });
    const byUri = (path: string, extra: Record<string, unknown> = {}) =>
      t.cms.post("createResource", {
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceName: "o.txt",
        resourceTenantId: "dig",
        resourceExternalURI: origin.url(path),
        ...extra,
      });
    expect((await byUri("/honest")).status).toBe(201);
    expect((await byUri("/silent", { expectedSha256: hex(bytes) })).status).toBe(201);
    await refusedWithNothingCommitted(() => byUri("/lying"), "/body/resourceExternalURI");
    await refusedWithNothingCommitted(() => byUri("/silent", { expectedSha256: hex("nope") }), "/body/expectedSha256");
    await refusedWithNothingCommitted(() => byUri("/honest", { expectedSha256: hex("nope") }), "/body/expectedSha256");
  });

  it("uploadResource: the expectedSha256 field, or Repr-Digest / Content-Digest on the file part", async () => {
    const bytes = new Uint8Array(200_000).map((_, i) => (i * 7) % 256);
    const fields = { resourceAuthor: "U", resourceTenantId: "dig", resourceName: "u.bin" };
    expect((await upload(t.app, form({ ...fields, expectedSha256: hex(bytes) }, { bytes }))).status).toBe(201);
    await refusedWithNothingCommitted(
      () => upload(t.app, form({ ...fields, expectedSha256: hex("x") }, { bytes })),
      "/body/expectedSha256",
    );

    // FormData cannot set part headers, so these bodies are written out by hand.
    const raw = (partHeader: string) => {
      const boundary = "----digest-test";
      const head = Object.entries(fields)
        .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
        .join("");
      const text = `${head}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="u.bin"\r\n${partHeader}\r\n\r\n`;
      const body = Buffer.concat([Buffer.from(text), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]);
      return () =>
        t.app.fetch(t.app.url(`${API}/uploadResource`), {
          method: "POST",
          body,
          headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
        });
    };
    expect((await raw(`Repr-Digest: ${field(bytes)}`)()).status).toBe(201);
    expect((await raw(`Content-Digest: sha-512=:AAAA:, ${field(bytes)}`)()).status).toBe(201);
    await refusedWithNothingCommitted(raw(`Repr-Digest: ${field("other")}`), "/body/file/repr-digest");
    await refusedWithNothingCommitted(raw(`Content-Digest: ${field("other")}`), "/body/file/content-digest");
    const [files, counts] = [await allVolumeFiles(), await tableCounts(t.app)];
    await expectProblem(await raw("Repr-Digest: sha-256=:short:")(), 400, "VALIDATION_FAILED", "/body/file");
    expect(await allVolumeFiles()).toEqual(files);
    expect(await tableCounts(t.app)).toEqual(counts);
  });
});
