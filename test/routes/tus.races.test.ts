/**
 * tus uploads finished, terminated and expired at the same moment, on the real server over
 * 127.0.0.1 (issue 25 §1): an upload is finished exactly once, by whichever request claims it; a
 * termination or an expiry racing the finish loses with a 4xx or wins outright, never a 500; a
 * PATCH whose upload went away answers as HEAD does. The bodies are large enough (16 MiB) that
 * the finishing PATCH is still assembling its parts when the racing request arrives.
 */
import { describe, expect, it } from "vitest";
import { collectExpiredUploads } from "../../src/services/tus-parts.js";
import { API, expectProblem, type ResourceDto, useCmsApp } from "../helpers/cms-client.js";

const MiB = 1024 * 1024;
const TENANT = "race";
const t = useCmsApp(TENANT, { CMS_MAX_RESOURCE_BYTES: String(64 * MiB), CMS_TUS_EXPIRY_SECONDS: "3600" });

const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const metadata = (name: string) => `tenant ${btoa(TENANT)},filename ${btoa(name)},author ${btoa("Racer")}`;

async function create(length: number, name: string): Promise<string> {
  const res = await t.app.fetch(t.app.url(`${API}/uploads`), {
    method: "POST",
    headers: { ...TUS, "upload-length": String(length), "upload-metadata": metadata(name) },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return t.app.url(res.headers.get("location") as string);
}
const patch = (url: string, offset: number, body: Uint8Array | string) =>
  t.app.fetch(url, {
    method: "PATCH",
    headers: { ...OCTETS, "upload-offset": String(offset) },
    body: body as BodyInit,
  });
const head = (url: string) => t.app.fetch(url, { method: "HEAD", headers: TUS });
const terminate = (url: string) => t.app.fetch(url, { method: "DELETE", headers: TUS });

/** Bytes no earlier test stored (so dedupe cannot shorten a finish). */
function fresh(size: number, seed: number): Uint8Array {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i += 4) bytes.writeUInt32LE(((i + seed) * 2654435761) >>> 0, i);
  return bytes;
}

/** Polls HEAD until the upload's offset is `length`; how many HEADs it took. */
async function untilComplete(url: string, length: number): Promise<number> {
  for (let polls = 1; polls < 10_000; polls++) {
    const res = await head(url);
    if (res.headers.get("upload-offset") === String(length)) return polls;
    if (res.status !== 200) throw new Error(`HEAD answered ${res.status}`);
  }
  throw new Error("the upload never completed");
}

const listed = async (namePrefix: string): Promise<ResourceDto[]> => {
  const res = await t.app.fetch(
    t.app.url(`${API}/listResources?resourceTenantId=${TENANT}&namePrefix=${namePrefix}&limit=100`),
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { resources: ResourceDto[] }).resources;
};
const usedBytes = async (): Promise<number> => {
  const res = await t.app.fetch(t.app.url(`${API}/usage?resourceTenantId=${TENANT}`));
  return ((await res.json()) as { bytes: number }).bytes;
};

/** The status of a request that lost a race: a 4xx problem answer, never a 5xx. */
async function lost(res: Response, allowed: number[]): Promise<void> {
  const text = await res.text();
  expect(allowed, `${res.status} ${text}`).toContain(res.status);
  if (text) expect(res.headers.get("content-type")).toBe("application/problem+json");
}

describe("tus: finishing, terminating and expiring race", () => {
  it("a second finisher (an empty PATCH at the full offset while the first still commits) never makes a second resource", async () => {
    const size = 16 * MiB;
    const before = await usedBytes();
    const url = await create(size, "twice.bin");
    let firstAnswered = false;
    const first = patch(url, 0, fresh(size, 1)).then((res) => {
      firstAnswered = true;
      return res;
    });
    await untilComplete(url, size);
    const racedWhileCommitting = !firstAnswered;
    const second = await patch(url, size, new Uint8Array(0));
    const one = await first;
    expect(racedWhileCommitting, "the second PATCH was sent before the first answered").toBe(true);

    const answers = [one, second];
    const winners = answers.filter((r) => r.status === 201);
    expect(winners.length, `statuses ${answers.map((r) => r.status)}`).toBeGreaterThanOrEqual(1);
    const uids = new Set(
      await Promise.all(winners.map(async (r) => ((await r.clone().json()) as ResourceDto).resourceUID)),
    );
    expect(uids.size).toBe(1);
    for (const loser of answers.filter((r) => r.status !== 201)) await lost(loser, [409]);
    expect((await listed("twice")).map((r) => r.resourceUID)).toEqual([...uids]);
    expect((await usedBytes()) - before).toBe(size);
  });

  it("DELETE while the last PATCH assembles the parts: one of them wins, the other is a 4xx, never a 500", async () => {
    const part = MiB;
    const size = 16 * part;
    const before = await usedBytes();
    const url = await create(size, "doomed.bin");
    const bytes = fresh(size, 2);
    for (let offset = 0; offset < size - part; offset += part)
      expect((await patch(url, offset, bytes.subarray(offset, offset + part))).status).toBe(204);
    const last = patch(url, size - part, bytes.subarray(size - part));
    await untilComplete(url, size);
    const deleted = await terminate(url);
    const finished = await last;

    if (finished.status === 201) {
      await lost(deleted, [409]);
      expect(await listed("doomed")).toHaveLength(1);
      expect((await usedBytes()) - before).toBe(size);
    } else {
      expect(deleted.status).toBe(204);
      await lost(finished, [404, 409, 410]);
      expect(await listed("doomed")).toHaveLength(0);
      expect((await usedBytes()) - before).toBe(0);
    }
    expect(finished.status === 201 || deleted.status === 204).toBe(true);
  });

  it("DELETE once the last PATCH has claimed the upload (it is assembling the parts): 409, and the PATCH's 201 stands", async () => {
    const size = 16 * MiB;
    const before = await usedBytes();
    const url = await create(size, "claimed.bin");
    const id = url.slice(url.lastIndexOf("/") + 1);
    const last = patch(url, 0, fresh(size, 4));
    // Watched in the database: the claim is the moment the finish begins.
    let state: string | undefined = "pending";
    while (state === "pending") {
      await new Promise((resolve) => setTimeout(resolve, 1));
      state = (await t.app.deps.store.tusUploads.find(id))?.state;
    }
    expect(state, "the finish was seen under way").toBe("finishing");
    await lost(await terminate(url), [409]);
    expect((await last).status).toBe(201);
    expect(await listed("claimed")).toHaveLength(1);
    expect((await usedBytes()) - before).toBe(size);
  });

  it("the collector expiring the upload while its last PATCH assembles the parts: never a 500, never a resource without its upload's bytes", async () => {
    const size = 16 * MiB;
    const before = await usedBytes();
    const url = await create(size, "expiring.bin");
    const last = patch(url, 0, fresh(size, 3));
    await untilComplete(url, size);
    // The collector's pass at the very moment the upload (as its last PATCH left it) expires.
    const id = url.slice(url.lastIndexOf("/") + 1);
    const row = await t.app.deps.store.tusUploads.find(id);
    expect(row).not.toBeNull();
    await collectExpiredUploads(t.app.deps.store.tusUploads, t.app.deps.blobs, row?.expiresAt ?? 0, 100);
    const finished = await last;

    if (finished.status === 201) {
      expect(await listed("expiring")).toHaveLength(1);
      expect((await usedBytes()) - before).toBe(size);
    } else {
      await lost(finished, [404, 409, 410]);
      expect(await listed("expiring")).toHaveLength(0);
      expect((await usedBytes()) - before).toBe(0);
    }
  });

  it("a PATCH whose upload is terminated while its body streams answers 404, as HEAD does", async () => {
    const url = await create(1000, "gone.bin");
    let push!: (chunk: Uint8Array | null) => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => (chunk ? controller.enqueue(chunk) : controller.close());
      },
    });
    const inFlight = t.app.fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body,
      duplex: "half",
    } as RequestInit);
    push(new Uint8Array(100).fill(7));
    // The server has the PATCH (its upload is found) before the upload goes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await terminate(url)).status).toBe(204);
    expect((await head(url)).status).toBe(404);
    push(new Uint8Array(100).fill(8));
    push(null);
    await expectProblem(await inFlight, 404, "NOT_FOUND");
  });
});

describe("tus: a finished upload", () => {
  it("HEAD says what it became: Location and a Link to the resource's getData URL", async () => {
    const url = await create(5, "found.txt");
    const res = await patch(url, 0, "found");
    expect(res.status).toBe(201);
    const created = (await res.json()) as ResourceDto;
    const path = `${API}/getData/${created.resourceURI}`;
    const again = await head(url);
    expect(again.status).toBe(200);
    expect(again.headers.get("upload-offset")).toBe("5");
    expect(again.headers.get("location")).toBe(path);
    expect(again.headers.get("link")).toBe(`<${path}>; rel="related"`);
    // A script on another origin (Uppy in a browser) may read both.
    const cross = await t.app.fetch(url, { method: "HEAD", headers: { ...TUS, origin: "https://app.example" } });
    expect(cross.headers.get("access-control-expose-headers")?.toLowerCase().split(",")).toEqual(
      expect.arrayContaining(["location", "link"]),
    );
    // An unfinished upload names nothing yet.
    const pending = await head(await create(5, "pending.txt"));
    expect(pending.headers.get("location")).toBeNull();
    expect(pending.headers.get("link")).toBeNull();
  });

  it("a PATCH to a finished upload is 409", async () => {
    const url = await create(3, "done.txt");
    expect((await patch(url, 0, "abc")).status).toBe(201);
    await expectProblem(await patch(url, 3, ""), 409, "CONFLICT");
  });
});
