/**
 * A new version of any size through tus (issue 40 §1): `resourceUID` + `lockID` + the lock's owner in
 * Upload-Metadata instead of tenant and name. updateResource's rules hold (the caller's live lock,
 * ownership, no package content), the upload's reservation is spent in the update's own batch, and a
 * refusal at the end leaves the resource and the tenant's usage as they were. Real IdP keys, the
 * real app in-process.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, cmsClient, expectProblem } from "../helpers/cms-client.js";

const INLINE = 64 * 1024;
const roles = (...names: string[]) => ({ resource_access: { "cms-server": { roles: names } } });
const b64 = (text: string) => Buffer.from(text).toString("base64");
const metadata = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `${k} ${b64(v)}`)
    .join(",");
const TUS = { "tus-resumable": "1.0.0" };
const hex = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

let stack: AuthStack;
const token: Record<string, string> = {};
beforeAll(async () => {
  // A small inline limit: updateResource refuses what the tus path takes.
  stack = await startAuthStack({ CMS_MAX_INLINE_BYTES: String(INLINE) }, { transport: "in-process" });
  token.owner = await stack.forge({ sub: "olga", ...roles("creator") });
  token.other = await stack.forge({ sub: "carl", ...roles("creator") });
  token.admin = await stack.forge({ sub: "root", ...roles("admin") });
});
afterAll(async () => stack?.close());

const post = (who: string, verb: string, body: unknown) =>
  stack.app.fetch(stack.app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { ...bearer(token[who] as string), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const get = async (who: string, path: string) => {
  const res = await stack.app.fetch(stack.app.url(`${API}/${path}`), { headers: bearer(token[who] as string) });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json() as Promise<Record<string, unknown>>;
};

const resource = async (tenant: string, content: string) =>
  (await cmsClient(stack.app, tenant, token.owner).create({ resourceName: "v.txt", resourceAuthor: "Olga" }, content))
    .resourceUID;
async function lock(uid: string): Promise<string> {
  const res = await post("owner", "lockResourceDTO", { resourceUID: uid, author: "Olga" });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { lockID: string }).lockID;
}
const start = (who: string, length: number, fields: Record<string, string>) =>
  stack.app.fetch(stack.app.url(`${API}/uploads`), {
    method: "POST",
    headers: {
      ...TUS,
      ...bearer(token[who] as string),
      "upload-length": String(length),
      "upload-metadata": metadata(fields),
    },
  });
const patch = (who: string, url: string, offset: number, body: Uint8Array) =>
  stack.app.fetch(stack.app.url(url), {
    method: "PATCH",
    headers: {
      ...TUS,
      ...bearer(token[who] as string),
      "content-type": "application/offset+octet-stream",
      "upload-offset": String(offset),
    },
    body: body as BodyInit,
  });

describe("tus: a new version of an existing resource", () => {
  it("replaces the content with more bytes than updateResource takes, in two PATCHes, as a new revision", async () => {
    const uid = await resource("nv", "version one");
    const lockID = await lock(uid);
    const bytes = randomBytes(3 * INLINE);
    // updateResource refuses it: the inline limit.
    const inline = await post("owner", "updateResource", {
      resourceUID: uid,
      author: "Olga",
      lockID,
      resourceBinary: bytes.toString("base64"),
    });
    expect(inline.status).toBe(413);
    const started = await start("owner", bytes.length, {
      resourceUID: uid,
      lockID,
      author: "Olga",
      filename: "ignored.bin",
      filetype: "application/octet-stream",
    });
    expect(started.status, await started.clone().text()).toBe(201);
    const url = started.headers.get("location") as string;
    expect((await get("admin", "usage?resourceTenantId=nv")).bytes).toBe(11 + bytes.length); // the reservation
    expect((await patch("owner", url, 0, bytes.subarray(0, INLINE))).status).toBe(204);
    // Nobody else continues it: not another creator, not even an admin (the lock is the owner's).
    await expectProblem(await patch("other", url, INLINE, bytes.subarray(INLINE)), 403, "FORBIDDEN");
    await expectProblem(await patch("admin", url, INLINE, bytes.subarray(INLINE)), 403, "FORBIDDEN");
    const last = await patch("owner", url, INLINE, bytes.subarray(INLINE));
    expect(last.status, await last.clone().text()).toBe(201);
    expect(await last.json()).toMatchObject({ resourceUID: uid, size: bytes.length, sha256: hex(bytes) });
    const queried = await post("owner", "queryResource", { queryUID: uid });
    expect(await queried.json()).toMatchObject({ sha256: hex(bytes), resourceURI: expect.stringMatching(/\/v\.txt$/) });
    const revisions = (await get("owner", `getRevisions/${uid}`)).revisions as { sha256: string }[];
    expect(revisions.map((r) => r.sha256)).toEqual([hex("version one"), hex(bytes)]);
    // The reservation was spent by the update: the new content counts once.
    expect((await get("admin", "usage?resourceTenantId=nv")).bytes).toBe(11 + bytes.length);
    // The lock stays held, as after updateResource; the upload's HEAD names the resource.
    expect((await get("owner", `resourceAccess/${uid}`)).lock).toMatchObject({ lockID });
    const head = await stack.app.fetch(stack.app.url(url), {
      method: "HEAD",
      headers: { ...TUS, ...bearer(token.owner as string) },
    });
    expect(head.headers.get("location")).toMatch(/\/getData\/.*\/v\.txt$/);
  });

  it("refuses before any byte: no lock (409), a wrong lockID (423), not the owner (403), a digest (400)", async () => {
    const uid = await resource("nv-refused", "one");
    const fields = { resourceUID: uid, lockID: "nope", author: "Olga" };
    await expectProblem(await start("owner", 4, fields), 409, "LOCK_NOT_HELD");
    const lockID = await lock(uid);
    await expectProblem(await start("owner", 4, fields), 423, "LOCKED");
    await expectProblem(await start("other", 4, { ...fields, lockID }), 403, "FORBIDDEN");
    await expectProblem(
      await start("owner", 4, { ...fields, lockID, expectedSha256: hex("four") }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-metadata/expectedSha256",
    );
    await expectProblem(
      await start("owner", 4, { resourceUID: uid, author: "Olga" }),
      400,
      "VALIDATION_FAILED",
      "/header/upload-metadata/lockID",
    );
  });

  it("a lock released before the last byte: 409, the resource and the usage as they were, the upload gone", async () => {
    const uid = await resource("nv-late", "before");
    const lockID = await lock(uid);
    const started = await start("owner", 5, { resourceUID: uid, lockID, author: "Olga" });
    expect(started.status).toBe(201);
    const url = started.headers.get("location") as string;
    expect((await post("owner", "unlockResourceDTO", { resourceUID: uid, author: "Olga", lockID })).status).toBe(204);
    await expectProblem(await patch("owner", url, 0, new TextEncoder().encode("after")), 409, "LOCK_NOT_HELD");
    expect(await (await post("owner", "queryResource", { queryUID: uid })).json()).toMatchObject({
      sha256: hex("before"),
    });
    expect((await get("admin", "usage?resourceTenantId=nv-late")).bytes).toBe(6);
    const head = await stack.app.fetch(stack.app.url(url), {
      method: "HEAD",
      headers: { ...TUS, ...bearer(token.owner as string) },
    });
    expect(head.status).toBe(404);
  });
});
