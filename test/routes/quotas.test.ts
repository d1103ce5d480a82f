/**
 * Per-tenant quotas on the real server: the usage document, 507 refusals that name the quota with
 * nothing left behind, 50 concurrent creates racing one limit, dedupe and purge accounting, tus.
 * Two server processes sharing one database: test/multi/quotas.test.ts.
 */
import { readdir } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config.js";
import { collectExpiredUploads } from "../../src/services/tus-parts.js";
import { API, cmsClient, expectProblem, tableCounts, useCmsApp } from "../helpers/cms-client.js";

const OVERRIDES = {
  race: { resources: 10 },
  bytes: { bytes: 1000 },
  ingress: { ingressBytesPerDay: 1500 },
  tus: { bytes: 100 },
  tusres: { resources: 1 },
  pending: { bytes: 1_000_000 },
  update: { bytes: 500 },
};
const t = useCmsApp(
  "quota",
  {
    CMS_QUOTA_OVERRIDES: JSON.stringify(OVERRIDES),
    CMS_QUOTA_RESOURCES: "1000",
    CMS_TUS_MAX_PENDING_PER_TENANT: "3",
  },
  { transport: "in-process" },
);

interface Usage {
  resourceTenantId: string;
  bytes: number;
  resources: number;
  revisions: number;
  ingressToday: number;
  limits: { bytes: number | null; resources: number | null; ingressBytesPerDay: number | null };
}
/** The tenant's usage, from this file's app or (`send`) another server. */
const usage = async (tenant: string, send: (path: string) => Promise<Response> = t.app.fetch): Promise<Usage> => {
  const res = await send(`${API}/usage?resourceTenantId=${tenant}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Usage;
};
const TUS = { "tus-resumable": "1.0.0" };
const tusCreate = (tenant: string, length: number, name: string) =>
  t.app.fetch(t.app.url(`${API}/uploads`), {
    method: "POST",
    headers: {
      ...TUS,
      "upload-length": String(length),
      "upload-metadata": `tenant ${btoa(tenant)},filename ${btoa(name)},author ${btoa("T")}`,
    },
  });
const tusPatch = (created: Response, offset: number, body: string | Uint8Array) =>
  t.app.fetch(t.app.url(created.headers.get("location") as string), {
    method: "PATCH",
    headers: { ...TUS, "upload-offset": String(offset), "content-type": "application/offset+octet-stream" },
    body: body as BodyInit,
  });
const allFiles = async () =>
  (await readdir(t.app.volume, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => `${e.parentPath}/${e.name}`)
    .sort();

describe("quotas", () => {
  it("usage: counts, limits from the defaults and overrides", async () => {
    const cms = cmsClient(t.app, "quota");
    expect(await usage("quota")).toEqual({
      resourceTenantId: "quota",
      bytes: 0,
      resources: 0,
      revisions: 0,
      ingressToday: 0,
      limits: { bytes: null, resources: 1000, ingressBytesPerDay: null },
    });
    await cms.create({ resourceName: "a.txt" }, "12345");
    await cms.create({ resourceName: "b.txt" }, "12345"); // the same content again: stored once, counted twice
    expect(await usage("quota")).toMatchObject({ bytes: 10, resources: 2, revisions: 2, ingressToday: 10 });
    expect((await usage("race")).limits).toEqual({ bytes: null, resources: 10, ingressBytesPerDay: null });
    await expectProblem(
      await t.app.fetch(t.app.url(`${API}/usage?resourceTenantId=bad tenant`)),
      400,
      "VALIDATION_FAILED",
      "/query/resourceTenantId",
    );
  });

  it("50 concurrent creates racing a limit of 10 resources: exactly 10 are stored, the rest are 507 naming the quota", async () => {
    const cms = cmsClient(t.app, "race");
    const filesBefore = (await allFiles()).length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => cms.postCreate({ resourceName: `r${i}.txt` }, `content ${i}`)),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 507)).toHaveLength(40);
    const refused = answers.find((r) => r.status === 507) as Response;
    const problem = await expectProblem(refused, 507, "QUOTA_EXCEEDED", "/quota/resources");
    expect(problem.detail).toMatch(/resources quota: limit 10, usage 10, this request 1/);
    expect(await usage("race")).toMatchObject({ resources: 10 });
    const listed = await cms.get("listResources?resourceTenantId=race&limit=200");
    expect(((await listed.json()) as { resources: unknown[] }).resources).toHaveLength(10);
    // The refused creates' blobs were discarded: only the 10 stored contents are on the volume.
    expect((await allFiles()).length - filesBefore).toBe(10);
  });

  it("a create over the bytes quota → 507 with limit and usage, and nothing left behind; purge gives the bytes back", async () => {
    const cms = cmsClient(t.app, "bytes");
    const first = await cms.create({ resourceName: "600.bin" }, "x".repeat(600));
    const [files, counts] = [await allFiles(), await tableCounts(t.app)];
    const problem = await expectProblem(
      await cms.postCreate({ resourceName: "over.bin" }, "y".repeat(401)),
      507,
      "QUOTA_EXCEEDED",
      "/quota/bytes",
    );
    expect(problem.detail).toContain("limit 1000, usage 600, this request 401");
    expect(await allFiles()).toEqual(files);
    expect(await tableCounts(t.app)).toEqual(counts);
    expect((await cms.postCreate({ resourceName: "fits.bin" }, "z".repeat(400))).status).toBe(201);
    expect(await usage("bytes")).toMatchObject({ bytes: 1000, resources: 2 });

    expect((await cms.post("purgeResource", { resourceUID: first.resourceUID })).status).toBe(200);
    expect(await usage("bytes")).toMatchObject({ bytes: 400, resources: 1 });
    expect((await cms.postCreate({ resourceName: "again.bin" }, "w".repeat(600))).status).toBe(201);
  });

  it("updateResource's new content is charged in full, since the earlier content stays as a revision; content the resource already keeps is not charged again; purge gives all of it back", async () => {
    const cms = cmsClient(t.app, "update");
    const created = await cms.create({ resourceName: "u.bin" }, "a".repeat(300));
    const update = async (change: { content?: string; resourceName?: string }) => {
      const lock = await cms.lock(created.resourceUID);
      const content =
        change.content === undefined ? {} : { resourceBinary: Buffer.from(change.content).toString("base64") };
      const name = change.resourceName === undefined ? {} : { resourceName: change.resourceName };
      const res = await cms.post("updateResource", {
        resourceUID: created.resourceUID,
        lockID: lock.lockID,
        author: lock.author,
        ...content,
        ...name,
      });
      await cms.post("unlockResourceDTO", {
        resourceUID: created.resourceUID,
        lockID: lock.lockID,
        author: lock.author,
      });
      return res;
    };
    // Revision 1 keeps the 300 bytes fetchable (getRevisionData): the tenant now stores 450.
    expect((await update({ content: "b".repeat(150) })).status).toBe(200);
    expect(await usage("update")).toMatchObject({ bytes: 450, resources: 1, ingressToday: 450, revisions: 2 });
    const [files, counts] = [await allFiles(), await tableCounts(t.app)];
    const problem = await expectProblem(
      await update({ content: "c".repeat(51) }),
      507,
      "QUOTA_EXCEEDED",
      "/quota/bytes",
    );
    expect(problem.detail).toContain("limit 500, usage 450, this request 51");
    expect(await allFiles()).toEqual(files);
    expect((await tableCounts(t.app)).revisions).toBe(counts.revisions);
    expect(await usage("update")).toMatchObject({ bytes: 450 });
    // Back to revision 1's content, and a rename: nothing new is stored, nothing is charged.
    expect((await update({ content: "a".repeat(300) })).status).toBe(200);
    expect((await update({ resourceName: "renamed.bin" })).status).toBe(200);
    expect(await usage("update")).toMatchObject({ bytes: 450, revisions: 4, ingressToday: 750 });
    expect((await update({ content: "d".repeat(50) })).status).toBe(200);
    expect(await usage("update")).toMatchObject({ bytes: 500 });
    expect((await cms.post("purgeResource", { resourceUID: created.resourceUID })).status).toBe(200);
    expect(await usage("update")).toMatchObject({ bytes: 0, resources: 0, revisions: 0 });
  });

  it("bytes taken in per day count the bytes received, and refuse past the day's limit", async () => {
    const cms = cmsClient(t.app, "ingress");
    expect((await cms.postCreate({ resourceName: "1.bin" }, "a".repeat(1000))).status).toBe(201);
    await expectProblem(
      await cms.postCreate({ resourceName: "2.bin" }, "b".repeat(501)),
      507,
      "QUOTA_EXCEEDED",
      "/quota/ingressBytesPerDay",
    );
    expect(await usage("ingress")).toMatchObject({ ingressToday: 1000, limits: { ingressBytesPerDay: 1500 } });
  });

  it("a tus upload that cannot fit is refused at creation, from its Upload-Length", async () => {
    const meta = `tenant ${btoa("tus")},filename ${btoa("huge.bin")},author ${btoa("T")}`;
    const start = await t.app.fetch(t.app.url(`${API}/uploads`), {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": "101", "upload-metadata": meta },
    });
    const problem = await expectProblem(start, 507, "QUOTA_EXCEEDED", "/quota/bytes");
    expect(problem.detail).toContain("limit 100, usage 0, this request 101");
  });

  it("a pending tus upload holds its Upload-Length: a create that would take its room is refused; finishing charges it once", async () => {
    const start = await tusCreate("tus", 60, "big.bin");
    expect(start.status).toBe(201);
    expect(await usage("tus")).toMatchObject({ bytes: 60, resources: 0 });
    const cms = cmsClient(t.app, "tus");
    await expectProblem(
      await cms.postCreate({ resourceName: "other.bin" }, "o".repeat(50)),
      507,
      "QUOTA_EXCEEDED",
      "/quota/bytes",
    );
    expect((await cms.postCreate({ resourceName: "small.bin" }, "s".repeat(40))).status).toBe(201);
    const patch = await tusPatch(start, 0, "q".repeat(60));
    expect(patch.status, await patch.clone().text()).toBe(201);
    expect(await usage("tus")).toMatchObject({ bytes: 100, resources: 2, ingressToday: 100 });
  });

  it("a tus upload refused at its last PATCH by a quota stays complete and holds its room; an empty PATCH finishes it once the quota allows", async () => {
    const cms = cmsClient(t.app, "tusres");
    const start = await tusCreate("tusres", 10, "late.bin");
    const other = await cms.create({ resourceName: "first.bin" }, "f");
    const counts = await tableCounts(t.app);
    await expectProblem(await tusPatch(start, 0, "r".repeat(10)), 507, "QUOTA_EXCEEDED", "/quota/resources");
    expect(await tableCounts(t.app)).toEqual(counts);
    expect(await usage("tusres")).toMatchObject({ bytes: 11, resources: 1 });
    expect(
      (
        await t.app.fetch(t.app.url(start.headers.get("location") as string), { method: "HEAD", headers: TUS })
      ).headers.get("upload-offset"),
    ).toBe("10");
    expect((await cms.post("purgeResource", { resourceUID: other.resourceUID })).status).toBe(200);
    expect((await tusPatch(start, 10, "")).status).toBe(201);
    expect(await usage("tusres")).toMatchObject({ bytes: 10, resources: 1 });
  });

  it("unfinished tus uploads count against the bytes quota until they finish, are terminated or expire", async () => {
    // Four uploads of 900 000 bytes, at once, against 1 000 000: one holds its room, the others are 507.
    const answers = await Promise.all([0, 1, 2, 3].map((i) => tusCreate("pending", 900_000, `p${i}.bin`)));
    expect(answers.map((r) => r.status).sort()).toEqual([201, 507, 507, 507]);
    for (const refused of answers.filter((r) => r.status === 507))
      await expectProblem(refused, 507, "QUOTA_EXCEEDED", "/quota/bytes");
    const first = answers.find((r) => r.status === 201) as Response;
    expect((await tusPatch(first, 0, new Uint8Array(899_999))).status).toBe(204);
    expect(await usage("pending")).toMatchObject({ bytes: 900_000, resources: 0 });
    // Terminated: its room is free again.
    expect(
      (await t.app.fetch(t.app.url(first.headers.get("location") as string), { method: "DELETE", headers: TUS }))
        .status,
    ).toBe(204);
    expect(await usage("pending")).toMatchObject({ bytes: 0 });
    // Expired and collected: likewise.
    const second = await tusCreate("pending", 900_000, "p4.bin");
    expect(second.status).toBe(201);
    expect(await usage("pending")).toMatchObject({ bytes: 900_000 });
    await t.app.services.collector.pass();
    expect(await usage("pending")).toMatchObject({ bytes: 900_000 });
    await collectExpiredUploads(t.app.deps.store.tusUploads, t.app.deps.blobs, Date.now() + 2 * 86_400_000, 100);
    expect(await usage("pending")).toMatchObject({ bytes: 0 });
    // Finished: the reservation becomes the resource's charge, not a second one.
    const third = await tusCreate("pending", 900_000, "p5.bin");
    expect((await tusPatch(third, 0, new Uint8Array(900_000).fill(5))).status).toBe(201);
    expect(await usage("pending")).toMatchObject({ bytes: 900_000, resources: 1 });
  });

  it("CMS_TUS_MAX_PENDING_PER_TENANT: more unfinished uploads are refused; finished and terminated ones do not count", async () => {
    const done = await tusCreate("many", 1, "done.bin");
    expect((await tusPatch(done, 0, "d")).status).toBe(201);
    const open = [];
    for (const i of [0, 1, 2]) {
      const res = await tusCreate("many", 10, `m${i}.bin`);
      expect(res.status).toBe(201);
      open.push(res);
    }
    const problem = await expectProblem(
      await tusCreate("many", 10, "m3.bin"),
      507,
      "QUOTA_EXCEEDED",
      "/quota/pendingUploads",
    );
    expect(problem.detail).toMatch(/3 unfinished uploads/);
    expect(await usage("many")).toMatchObject({ bytes: 1 + 30 });
    expect(
      (await t.app.fetch(t.app.url(open[0]?.headers.get("location") as string), { method: "DELETE", headers: TUS }))
        .status,
    ).toBe(204);
    expect((await tusCreate("many", 10, "m4.bin")).status).toBe(201);
  });

  it("CMS_QUOTA_OVERRIDES must be valid JSON of limits", () => {
    for (const bad of ["{", '{"a":{"bytes":-1}}', '{"a":{"size":1}}', '{"bad tenant":{}}']) {
      expect(() => parseConfig({ CMS_QUOTA_OVERRIDES: bad }), bad).toThrow(ConfigError);
    }
    expect(parseConfig({ CMS_QUOTA_OVERRIDES: '{"a":{"bytes":5}}' }).CMS_QUOTA_OVERRIDES).toEqual({ a: { bytes: 5 } });
  });
});
