/**
 * tus creation refusals and what they leave behind: a refused creation leaves no upload row and no
 * part; malformed digest fields are 400 with or without a body; Upload-Metadata keys are the
 * client's own (none is "given twice" because Object.prototype has it); an upload that ends, however
 * it ends, leaves no `tus/<id>/` directory on the fs volume.
 */
import { createHash } from "node:crypto";
import { readdir } from "node:fs/promises";
import { createClient } from "@libsql/client";
import { describe, expect, it } from "vitest";
import { API, expectProblem, useCmsApp } from "../helpers/cms-client.js";
import { fakeClock } from "../helpers/fake-clock.js";

/** The app's clock: expiry tests move it instead of sleeping past CMS_TUS_EXPIRY_SECONDS. */
const time = fakeClock();
const t = useCmsApp(
  "tuserr",
  { CMS_MAX_RESOURCE_BYTES: String(1024 * 1024), CMS_TUS_EXPIRY_SECONDS: "2" },
  { clock: time.clock, transport: "in-process" },
);

const b64 = (text: string) => Buffer.from(text).toString("base64");
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(",");
const FIELDS = { resourceTenantId: "tuserr", filename: "t.bin", author: "Tus" };
const TUS = { "tus-resumable": "1.0.0" };
const OCTETS = { ...TUS, "content-type": "application/offset+octet-stream" };
const sha256 = (text: string) => createHash("sha256").update(text).digest("base64");

const endpoint = () => t.app.url(`${API}/uploads`);
const post = (headers: Record<string, string>, body?: string) =>
  t.app.fetch(endpoint(), {
    method: "POST",
    headers: { ...TUS, "upload-metadata": metadata(FIELDS), ...headers },
    body,
  });

async function uploadRows(): Promise<number> {
  const client = createClient({ url: t.app.databaseUrl });
  try {
    const { rows } = await client.execute("select count(*) as n from tus_uploads");
    return Number(rows[0]?.n);
  } finally {
    client.close();
  }
}

/** Keys under tus/ in the blob store (parts of any upload). */
async function partKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of t.app.deps.blobs.list("tus/")) keys.push(key);
  return keys;
}

describe("a refused creation-with-upload leaves nothing", () => {
  it.each([
    [
      "a checksum mismatch → 460",
      { ...OCTETS, "upload-checksum": `sha256 ${sha256("other")}` },
      460,
      "CHECKSUM_MISMATCH",
      "/header/upload-checksum",
    ],
    [
      "a Content-Digest mismatch → 460",
      { ...OCTETS, "content-digest": `sha-256=:${sha256("other")}:` },
      460,
      "CHECKSUM_MISMATCH",
      undefined,
    ],
    [
      "a body of another type → 415",
      { ...TUS, "content-type": "text/plain" },
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      undefined,
    ],
    [
      "a malformed Upload-Checksum → 400",
      { ...OCTETS, "upload-checksum": "sha256 AAAA" },
      400,
      "VALIDATION_FAILED",
      "/header/upload-checksum",
    ],
    [
      "a malformed Content-Digest → 400",
      { ...OCTETS, "content-digest": "sha-256=:AAAA:" },
      400,
      "VALIDATION_FAILED",
      "/header/content-digest",
    ],
    ["a body past Upload-Length → 413", { ...OCTETS, "upload-length": "3" }, 413, "PAYLOAD_TOO_LARGE", undefined],
  ])("%s", async (_label, headers, status, code, pointer) => {
    const rows = await uploadRows();
    const res = await post({ "upload-length": "10", ...headers }, "0123456789");
    await expectProblem(res, status, code, pointer);
    expect(res.headers.get("location")).toBeNull();
    expect(await uploadRows()).toBe(rows);
    expect(await partKeys()).toEqual([]);
  });

  it("an accepted creation-with-upload still keeps its row and its first bytes", async () => {
    const rows = await uploadRows();
    const res = await post(
      { ...OCTETS, "upload-length": "10", "upload-checksum": `sha256 ${sha256("01234")}` },
      "01234",
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("upload-offset")).toBe("5");
    expect(await uploadRows()).toBe(rows + 1);
    const url = t.app.url(res.headers.get("location") as string);
    expect((await t.app.fetch(url, { method: "DELETE", headers: TUS })).status).toBe(204);
  });
});

describe("a creation without a body checks its digest fields as every endpoint does", () => {
  it.each([
    ["content-digest", "sha-256=:AAAA:"],
    ["repr-digest", "sha-256=:not base64!:"],
    ["content-digest", "not a dictionary ("],
    ["upload-checksum", "md5 AAAA"],
  ])("a malformed %s (%s) → 400 naming it, and no upload", async (header, value) => {
    const rows = await uploadRows();
    await expectProblem(
      await post({ "upload-length": "10", [header]: value }),
      400,
      "VALIDATION_FAILED",
      `/header/${header}`,
    );
    expect(await uploadRows()).toBe(rows);
  });

  it("a well-formed digest of another algorithm is ignored, as elsewhere (RFC 9530 §4)", async () => {
    const res = await post({ "upload-length": "10", "content-digest": "sha-512=:AAAA:" });
    expect(res.status).toBe(201);
    await t.app.fetch(t.app.url(res.headers.get("location") as string), { method: "DELETE", headers: TUS });
  });
});

describe("Upload-Metadata keys", () => {
  it.each(["toString", "constructor", "hasOwnProperty", "__proto__"])(
    "an extra key %s is ignored like any unknown key",
    async (key) => {
      const res = await t.app.fetch(endpoint(), {
        method: "POST",
        headers: { ...OCTETS, "upload-length": "2", "upload-metadata": `${metadata(FIELDS)},${key} ${b64("x")}` },
        body: "hi",
      });
      expect(res.status, await res.clone().text()).toBe(201);
      expect(((await res.json()) as { resourceURI: string }).resourceURI).toMatch(/\/t\.bin$/);
    },
  );
});

describe("an upload that ends leaves no tus/<id>/ directory on the volume", () => {
  /** Directories on the volume named for the upload at `url` (`…/tus/<id>`). */
  async function uploadDirs(url: string): Promise<string[]> {
    const id = url.slice(url.lastIndexOf("/") + 1);
    const entries = await readdir(t.app.volume, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory() && e.name === id && e.parentPath.endsWith("/tus"))
      .map((e) => `${e.parentPath}/${e.name}`);
  }
  async function started(length: number, bytes: string): Promise<string> {
    const res = await post({ "upload-length": String(length) });
    expect(res.status).toBe(201);
    const url = t.app.url(res.headers.get("location") as string);
    const patched = await t.app.fetch(url, {
      method: "PATCH",
      headers: { ...OCTETS, "upload-offset": "0" },
      body: bytes,
    });
    expect(patched.status).toBe(bytes.length === length ? 201 : 204);
    return url;
  }

  it("finished", async () => {
    const url = await started(4, "abcd");
    expect(await uploadDirs(url)).toEqual([]);
  });

  it("terminated", async () => {
    const url = await started(10, "abc");
    expect(await uploadDirs(url)).toHaveLength(1); // the part lives there meanwhile
    expect((await t.app.fetch(url, { method: "DELETE", headers: TUS })).status).toBe(204);
    expect(await uploadDirs(url)).toEqual([]);
  });

  it("expired (collected by the next creation)", async () => {
    const url = await started(10, "abc");
    expect(await uploadDirs(url)).toHaveLength(1);
    time.advance(2100); // past CMS_TUS_EXPIRY_SECONDS on the app's clock
    const next = await post({ "upload-length": "1" });
    expect(next.status).toBe(201);
    expect(await uploadDirs(url)).toEqual([]);
    await t.app.fetch(t.app.url(next.headers.get("location") as string), { method: "DELETE", headers: TUS });
  });
});

describe("names that lie", () => {
  it.each(["invoice\u202Efdp.exe", "a\u2068b.bin", "a\u200Fb.bin"])(
    "an Upload-Metadata filename %j → 400 naming resourceName, and no upload",
    async (filename) => {
      const rows = await uploadRows();
      const res = await t.app.fetch(endpoint(), {
        method: "POST",
        headers: { ...TUS, "upload-length": "10", "upload-metadata": metadata({ ...FIELDS, filename }) },
      });
      await expectProblem(res, 400, "VALIDATION_FAILED", "/header/upload-metadata/resourceName");
      expect(await uploadRows()).toBe(rows);
    },
  );
});
