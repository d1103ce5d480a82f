/**
 * Direct uploads (docs/direct-storage.md) on the fs volume, where the upload URL is the service's
 * own: the same flow as on a bucket, over 127.0.0.1. The attacks the issue names: two completions
 * racing, a PUT after completion, a URL replayed after expiry, a size lie, other bytes.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";

const TENANT = "direct";
const time = fakeClock();
const t = useCmsApp(
  TENANT,
  {
    CMS_UPLOAD_URL_TTL_SECONDS: "600",
    CMS_MAX_RESOURCE_BYTES: "100000",
    CMS_QUOTA_OVERRIDES: JSON.stringify({ small: { bytes: 10 } }),
  },
  { clock: time.clock },
);

interface Ticket {
  uploadId: string;
  method: "PUT" | null;
  url: string | null;
  headers: Record<string, string>;
  expiresAt: string;
}

const hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
/** Bytes no other test sends (so no dedupe unless a test wants one). */
const fresh = (label: string) => new TextEncoder().encode(`${label} ${crypto.randomUUID()}`);
const PNG = Uint8Array.from(
  Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAcCBlCwAAAABJRU5ErkJggg==",
    "base64",
  ),
);

const post = (verb: string, body: unknown) =>
  t.app.fetch(t.app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function ticketFor(bytes: Uint8Array, extra: Record<string, unknown> = {}): Promise<Ticket> {
  const res = await post("createUploadURL", {
    resourceName: "file.bin",
    resourceTenantId: TENANT,
    resourceAuthor: "Uploader",
    size: bytes.length,
    sha256: hex(bytes),
    ...extra,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Ticket;
}

const send = (ticket: Ticket, body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(ticket.url as string, { method: "PUT", headers: { ...ticket.headers, ...headers }, body: body as BodyInit });
const complete = (uploadId: string) => post("completeUpload", { uploadId });
const usageBytes = async (tenant = TENANT) => {
  const res = await t.app.fetch(t.app.url(`${API}/usage?resourceTenantId=${tenant}`));
  return ((await res.json()) as { bytes: number }).bytes;
};

describe("createUploadURL and completeUpload on the fs volume", () => {
  it("a PUT to the service's own URL, then completion: the resource, typed by its bytes", async () => {
    const ticket = await ticketFor(PNG, { resourceName: "dot.png", resourceMediaType: "image/jpeg" });
    expect(ticket.method).toBe("PUT");
    expect(new URL(ticket.url as string).origin).toBe(new URL(t.app.baseUrl).origin);
    expect(Date.parse(ticket.expiresAt) - time.nowMs()).toBe(600_000);
    const put = await send(ticket, PNG);
    expect(put.status, await put.clone().text()).toBe(204);
    const res = await complete(ticket.uploadId);
    expect(res.status, await res.clone().text()).toBe(201);
    const resource = (await res.json()) as ResourceDto & { versionedURI: string };
    // Announced JPEG, but the bytes are a PNG: the bytes decide.
    expect(resource.mediaType).toBe("image/png");
    expect(resource.versionedURI).toContain("?v=");
    const data = await t.app.fetch(t.app.url(res.headers.get("location") as string));
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(PNG);
  });

  it("content the tenant already stores moves nothing: method null, completed at once", async () => {
    const bytes = fresh("duplicate");
    const first = await ticketFor(bytes);
    expect((await send(first, bytes)).status).toBe(204);
    expect((await complete(first.uploadId)).status).toBe(201);
    const second = await ticketFor(bytes, { resourceName: "again.bin" });
    expect(second).toMatchObject({ method: null, url: null, headers: {} });
    const res = await complete(second.uploadId);
    expect(res.status, await res.clone().text()).toBe(201);
    const again = (await res.json()) as ResourceDto;
    expect(again.resourceURI).toMatch(/\/again\.bin$/);
    expect(again.sha256).toBe(hex(bytes));
  });

  it("refuses what cannot fit up front: 413 over CMS_MAX_RESOURCE_BYTES, 507 over the quota", async () => {
    const tooBig = await post("createUploadURL", {
      resourceName: "big.bin",
      resourceTenantId: TENANT,
      resourceAuthor: "Uploader",
      size: 100_001,
      sha256: "0".repeat(64),
    });
    await expectProblem(tooBig, 413, "PAYLOAD_TOO_LARGE", "/body/size");
    const overQuota = await post("createUploadURL", {
      resourceName: "q.bin",
      resourceTenantId: "small",
      resourceAuthor: "Uploader",
      size: 11,
      sha256: "0".repeat(64),
    });
    await expectProblem(overQuota, 507, "QUOTA_EXCEEDED");
  });

  it("an unfinished upload's reservation counts: neither a second URL nor createResource may use its room", async () => {
    const six = fresh("six").subarray(0, 6);
    const held = await ticketFor(six, { resourceTenantId: "small" });
    const second = await post("createUploadURL", {
      resourceName: "second.bin",
      resourceTenantId: "small",
      resourceAuthor: "Uploader",
      size: 6,
      sha256: hex(fresh("other").subarray(0, 6)),
    });
    await expectProblem(second, 507, "QUOTA_EXCEEDED");
    const plain = await post("createResource", {
      resourceName: "plain.bin",
      resourceTenantId: "small",
      resourceAuthor: "Uploader",
      resourceBinary: Buffer.from("12345").toString("base64"),
    });
    await expectProblem(plain, 507, "QUOTA_EXCEEDED");
    // The held room is the upload's own: its completion fits.
    await send(held, six);
    expect((await complete(held.uploadId)).status).toBe(201);
  });

  it("holds the size in the tenant's quota until completion, then counts the resource once", async () => {
    const bytes = fresh("reserved");
    const before = await usageBytes();
    const ticket = await ticketFor(bytes);
    expect(await usageBytes()).toBe(before + bytes.length);
    await send(ticket, bytes);
    expect((await complete(ticket.uploadId)).status).toBe(201);
    expect(await usageBytes()).toBe(before + bytes.length);
  });

  it("409 UPLOAD_INCOMPLETE before the bytes, 404 for an unknown id, 409 for a second completion", async () => {
    const bytes = fresh("order");
    const ticket = await ticketFor(bytes);
    await expectProblem(await complete(ticket.uploadId), 409, "UPLOAD_INCOMPLETE");
    await expectProblem(await complete("0".repeat(32)), 404, "NOT_FOUND");
    await send(ticket, bytes);
    expect((await complete(ticket.uploadId)).status).toBe(201);
    await expectProblem(await complete(ticket.uploadId), 409, "CONFLICT");
  });

  it("two completions racing: exactly one creates the resource, the other is told 409", async () => {
    const bytes = fresh("race");
    const ticket = await ticketFor(bytes);
    await send(ticket, bytes);
    const answers = await Promise.all([
      complete(ticket.uploadId),
      complete(ticket.uploadId),
      complete(ticket.uploadId),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const r of answers) await r.body?.cancel();
  });

  it("a PUT after completion is refused (409): the resource's bytes cannot change", async () => {
    const bytes = fresh("after");
    const ticket = await ticketFor(bytes);
    await send(ticket, bytes);
    expect((await complete(ticket.uploadId)).status).toBe(201);
    await expectProblem(await send(ticket, bytes), 409, "CONFLICT");
  });

  it("other bytes are refused (422 DIGEST_MISMATCH), a size lie too (422 SIZE_MISMATCH): nothing is kept", async () => {
    const bytes = fresh("honest");
    const ticket = await ticketFor(bytes);
    const other = new Uint8Array(bytes);
    other[0] = (other[0] ?? 0) ^ 1;
    await expectProblem(await send(ticket, other), 422, "DIGEST_MISMATCH");
    await expectProblem(await send(ticket, bytes.subarray(1)), 422, "SIZE_MISMATCH");
    await expectProblem(await send(ticket, Uint8Array.of(...bytes, 1)), 422, "SIZE_MISMATCH");
    await expectProblem(await complete(ticket.uploadId), 409, "UPLOAD_INCOMPLETE");
    // The honest bytes still go through the same URL.
    expect((await send(ticket, bytes)).status).toBe(204);
    expect((await complete(ticket.uploadId)).status).toBe(201);
  });

  it("a wrong token is refused like an unknown upload (404)", async () => {
    const bytes = fresh("token");
    const ticket = await ticketFor(bytes);
    const url = new URL(ticket.url as string);
    url.searchParams.set("token", "f".repeat(64));
    const res = await fetch(url, { method: "PUT", body: bytes as BodyInit });
    await expectProblem(res, 404, "NOT_FOUND");
  });

  it("after its lifetime the URL and the id are dead (404), and the collector gives the reservation back", async () => {
    // Its own tenant: the other tests' unfinished uploads expire in the same pass.
    const bytes = fresh("expired");
    const before = await usageBytes("lapsed");
    const ticket = await ticketFor(bytes, { resourceTenantId: "lapsed" });
    await send(ticket, bytes);
    time.advance(600_001);
    await expectProblem(await send(ticket, bytes), 404, "NOT_FOUND");
    await expectProblem(await complete(ticket.uploadId), 404, "NOT_FOUND");
    expect(await usageBytes("lapsed")).toBe(before + bytes.length);
    const figures = await t.app.services.collector.pass();
    expect(figures.uploadsExpired).toBeGreaterThanOrEqual(1);
    expect(await usageBytes("lapsed")).toBe(before);
    expect(await t.app.deps.blobs.head(`direct/${ticket.uploadId}` as never)).toBeNull();
  });
});
