/**
 * Packages that must be refused, and the all-or-nothing promise: a refused package leaves no rows
 * (neither the zip nor any file) and no new blobs, even when it fails halfway through extraction.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { expectProblem, tableCounts, volumeFiles, useCmsApp } from "../helpers/cms-client.js";
import { infoJsonZip, plainZip } from "../helpers/packages.js";
import { buildZip, type WriterEntry } from "../helpers/zip-writer.js";

const MiB = 1024 * 1024;
const LIMIT = 256 * 1024;

const t = useCmsApp(
  "badzip",
  {
    CMS_MAX_RESOURCE_BYTES: String(LIMIT),
    CMS_ZIP_MAX_ENTRIES: "8",
    CMS_MAX_INLINE_BYTES: String(LIMIT),
  },
  { transport: "in-process" },
);

const START = { name: "info.json", data: JSON.stringify({ startPage: "index.html" }) };
const INDEX = { name: "index.html", data: "<html></html>" };
/** Fresh, incompressible files, so their blobs are new and must be discarded on failure. */
const unique = (n: number): WriterEntry[] =>
  Array.from({ length: n }, (_, i) => ({ name: `assets/f${i}.bin`, data: new Uint8Array(randomBytes(2048)) }));

async function refuses(
  zip: Uint8Array,
  status: number,
  code: string,
  pointer = "/body/resourceBinary",
  name = "pkg.zip",
) {
  const [files, counts] = [await volumeFiles(t.app), await tableCounts(t.app)];
  const res = await t.cms.postCreate({ resourceMediaType: "application/zip", resourceName: name }, zip);
  const problem = await expectProblem(res, status, code, pointer);
  expect(await tableCounts(t.app)).toEqual(counts);
  expect(await volumeFiles(t.app)).toEqual(files);
  return problem;
}

describe("packages without a start page", () => {
  it("a zip with neither info.json nor imsmanifest.xml → 400, and not even the zip is kept (the anchor orphaned it)", async () => {
    const p = await refuses(await plainZip(), 400, "VALIDATION_FAILED");
    expect(p.detail).toMatch(/info\.json.*imsmanifest\.xml/);
  });

  it.each([
    ["info.json naming a missing file", [{ name: "info.json", data: '{"startpage":"nope.html"}' }, INDEX]],
    ["info.json that is not JSON", [{ name: "info.json", data: "{" }, INDEX]],
    ["a manifest without resources", [{ name: "imsmanifest.xml", data: "<manifest/>" }, INDEX]],
  ])("%s → 400", async (_label, entries) => {
    await refuses(await buildZip(entries as WriterEntry[]), 400, "VALIDATION_FAILED");
  });

  it("bytes that are not a zip at all → 400", async () => {
    await refuses(new Uint8Array(randomBytes(3000)), 400, "VALIDATION_FAILED");
  });
});

describe("hostile packages", () => {
  it.each([
    ["a parent-directory entry (zip slip)", "../evil.html"],
    ["a nested parent-directory entry", "assets/../../evil.html"],
    ["an absolute entry", "/etc/cron.d/evil"],
    ["a Windows drive entry", "C:/evil.html"],
    ["a backslash entry", "assets\\..\\evil.html"],
  ])("refuses %s", async (_label, name) => {
    await refuses(await buildZip([START, INDEX, ...unique(1), { name, data: "x" }]), 400, "VALIDATION_FAILED");
  });

  it("refuses a symbolic link entry", async () => {
    await refuses(
      await buildZip([START, INDEX, { name: "link", data: "/etc/passwd", unixMode: 0o120777 }]),
      400,
      "VALIDATION_FAILED",
    );
  });

  it("refuses a bomb by its compression ratio before inflating anything", async () => {
    const p = await refuses(
      await buildZip([START, INDEX, { name: "zeros.bin", fill: { byte: 0, length: 64 * MiB } }]),
      400,
      "VALIDATION_FAILED",
    );
    expect(p.detail).toMatch(/expands more than 100:1/);
  });

  it("refuses more entries than CMS_ZIP_MAX_ENTRIES", async () => {
    await refuses(await buildZip([START, INDEX, ...unique(7)]), 400, "VALIDATION_FAILED");
  });

  it("stops a bomb that lies about its size halfway through, discarding the files already stored", async () => {
    const liar = { name: "zz-bomb.bin", fill: { byte: 0, length: 8 * MiB }, lie: { uncompressedSize: 1000 } };
    await refuses(await buildZip([START, INDEX, ...unique(3), liar]), 400, "VALIDATION_FAILED");
  });

  it("stops at a file whose CRC does not match, discarding the files already stored", async () => {
    await refuses(
      await buildZip([START, INDEX, ...unique(3), { name: "zz-bad.txt", data: "tampered", lie: { crc32: 12345 } }]),
      400,
      "VALIDATION_FAILED",
    );
  });

  it("refuses a file over CMS_MAX_RESOURCE_BYTES inside the package with 413", async () => {
    await refuses(
      await buildZip([START, INDEX, ...unique(2), { name: "big.bin", fill: { byte: 7, length: LIMIT + 1 } }]),
      413,
      "PAYLOAD_TOO_LARGE",
    );
  });

  it("refuses an entry with the package's own name (both would have one URI)", async () => {
    await refuses(
      await buildZip([START, INDEX, { name: "pkg.zip", data: "inner" }]),
      400,
      "VALIDATION_FAILED",
      "/body/resourceName",
    );
  });

  it("points at resourceExternalURI when the zip was downloaded", async () => {
    const url = t.origin.put("plain.zip", await plainZip());
    const res = await t.cms.postCreate({
      resourceMediaType: "application/zip",
      resourceName: "p.zip",
      resourceExternalURI: url,
      resourceBinary: undefined,
    });
    await expectProblem(res, 400, "VALIDATION_FAILED", "/body/resourceExternalURI");
  });

  it("still accepts a good package afterwards", async () => {
    const res = await t.cms.postCreate(
      { resourceMediaType: "application/zip", resourceName: "good.zip" },
      await infoJsonZip(),
    );
    expect(res.status).toBe(201);
  });
});
