/**
 * "Try it out" of every operation on the explorer's defaults, in-process: each request is built from
 * the served document as Swagger UI builds it (a required input starts with its example or default,
 * an optional one empty or with the server's default, a JSON body with its required properties
 * only), with only what a user types added (ids, a length, a file), and must get the status a user
 * expects. Real Chromium drives one operation per kind of form (test/e2e/explorer-try-it.test.ts):
 * the page's behaviour is the same for every operation of a kind; what differs is the document,
 * which this file reads for all of them.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IN_PROCESS_ORIGIN } from "../helpers/in-process-fetch.js";
import { PNG_1x1 } from "../helpers/media-fixtures.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { type Json, type TryIt, trySeeding } from "../helpers/try-it-seed.js";
import { buildZip } from "../helpers/zip-writer.js";

type Schema = { $ref?: string; required?: string[]; allOf?: Schema[]; example?: unknown; default?: unknown };
type Parameter = { name: string; in: string; required?: boolean; example?: unknown; schema?: Schema };
type MediaType = { schema?: Schema; example?: unknown };
type Operation = {
  operationId: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, MediaType> };
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } };

const TENANT = "tryit";
const AUTHOR = "explorer";

let app: TestApp;
let origin: Origin;
/** The served document, as the explorer reads it (signed links: built on the in-process origin). */
let doc: Document;
const ran = new Set<string>();
let post: ReturnType<typeof trySeeding>["post"];
let create: ReturnType<typeof trySeeding>["create"];

beforeAll(async () => {
  [app, origin] = await Promise.all([
    startTestApp({ CMS_PUBLIC_URL: IN_PROCESS_ORIGIN }, { transport: "in-process" }),
    startOrigin(),
  ]);
  doc = (await (await app.fetch("/openapi.json")).json()) as Document;
  ({ post, create } = trySeeding(app, TENANT));
});
afterAll(async () => {
  await origin?.close();
  await app?.close();
});

function operation(id: string): { method: string; path: string; op: Operation } {
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) if (op.operationId === id) return { method, path, op };
  throw new Error(`no operation ${id}`);
}

function required(schema: Schema | undefined): string[] {
  const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").at(-1) ?? ""] : schema;
  return [...(resolved?.allOf ?? []).flatMap(required), ...(resolved?.required ?? [])];
}

/** The request Swagger UI sends for `id` when the user types `input`. */
function request(id: string, input: TryIt): { url: string; init: RequestInit } {
  const { method, path, op } = operation(id);
  let url = path;
  const query = new URLSearchParams();
  const headers = new Headers();
  for (const p of op.parameters ?? []) {
    const start = p.example ?? p.schema?.example ?? p.schema?.default;
    if (p.required) expect(input.params?.[p.name] ?? start, `${id}: required ${p.name} starts empty`).toBeDefined();
    // Nothing but the server's own default is pre-filled into an optional input.
    else expect(p.example ?? p.schema?.example, `${id}: optional ${p.name} pre-filled`).toBeUndefined();
    const value = input.oneOf?.[p.name] ?? (p.required ? (input.params?.[p.name] ?? start) : p.schema?.default);
    if (value === undefined) continue;
    if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
    else if (p.in === "query") query.set(p.name, String(value));
    else if (p.in === "header") headers.set(p.name, String(value));
  }
  const content = op.requestBody?.content ?? {};
  let body: BodyInit | undefined;
  if (content["application/json"]) {
    const start = (content["application/json"].example ?? {}) as Json;
    expect(Object.keys(start).sort(), `${id}: the body starts with its required properties only`).toEqual(
      required(content["application/json"].schema).sort(),
    );
    headers.set("content-type", "application/json");
    body = JSON.stringify({ ...start, ...input.json });
  } else if (input.text !== undefined) {
    headers.set("content-type", "text/plain");
    body = input.text;
  } else if (content["multipart/form-data"]) {
    const form = new FormData();
    for (const [name, value] of Object.entries(input.form ?? {})) form.set(name, value);
    if (input.file)
      form.set("file", new Blob([new Uint8Array(input.file.buffer)], { type: input.file.mimeType }), input.file.name);
    body = form;
  } else if (input.file) {
    headers.set("content-type", Object.keys(content)[0] ?? "application/octet-stream");
    body = new Uint8Array(input.file.buffer);
  }
  const search = query.size ? `?${query}` : "";
  return { url: `${url}${search}`, init: { method: method.toUpperCase(), headers, body } };
}

/** Runs `id` as the explorer would, checks its status; the body parsed as JSON ({} if it is not). */
async function expectTry(id: string, input: TryIt, status: number): Promise<Json & { headers: Headers }> {
  const { url, init } = request(id, input);
  const res = await app.fetch(url, init);
  const text = await res.text();
  ran.add(id);
  expect(res.status, `${id}: ${text.slice(0, 300)}`).toBe(status);
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {}
  return { ...body, headers: res.headers };
}

describe("explorer try-it on its defaults, every operation (in-process)", () => {
  it("runs the meta operations", async () => {
    await expectTry("apiVersion", {}, 200);
    await expectTry("healthz", {}, 200);
    await expectTry("readyz", {}, 200);
  });

  it("runs createResource, queryResource, listResources, createDataLink, uploadResource and getUsage", async () => {
    await expectTry(
      "createResource",
      {
        json: {
          resourceAuthor: AUTHOR,
          resourceTenantId: TENANT,
          resourceName: "made.txt",
          resourceMediaType: "text/plain",
          resourceExternalURI: origin.put("made", "made from the explorer"),
        },
      },
      201,
    );
    const uid = await create("hello.txt", "text/plain", "hello from the explorer");
    await expectTry("queryResource", { json: { queryUID: uid } }, 200);
    await expectTry("listResources", { oneOf: { resourceTenantId: TENANT } }, 200);
    await expectTry("createDataLink", { json: { resourceURI: `${uid}/hello.txt` } }, 200);
    await expectTry(
      "uploadResource",
      {
        form: { resourceAuthor: AUTHOR, resourceTenantId: TENANT },
        file: { name: "upload.png", mimeType: "image/png", buffer: PNG_1x1 },
      },
      201,
    );
    await expectTry("getUsage", { params: { resourceTenantId: TENANT } }, 200);
  });

  it("runs a whole tus upload: options, create, offset, append, and terminates another", async () => {
    const bytes = Buffer.from("sent through tus");
    const options = await expectTry("tusOptions", {}, 204);
    expect(options.headers.get("tus-version")).toBe("1.0.0");
    // Only the length is typed: the protocol version and the metadata start with working values.
    const created = await expectTry("tusCreateUpload", { params: { "upload-length": String(bytes.length) } }, 201);
    const id = /\/uploads\/([0-9a-f]{32})$/.exec(created.headers.get("location") ?? "")?.[1] ?? "";
    expect(id).not.toBe("");
    const offset = await expectTry("tusUploadOffset", { params: { id } }, 200);
    expect(offset.headers.get("upload-offset")).toBe("0");
    const appended = await expectTry(
      "tusAppend",
      { params: { id }, file: { name: "tus.txt", mimeType: "text/plain", buffer: bytes } },
      201,
    );
    expect(appended.size).toBe(bytes.length);
    const res = await app.fetch("/cms/v1.0/uploads", {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "10",
        "upload-metadata": `resourceTenantId ${btoa(TENANT)},resourceName ${btoa("gone.txt")},resourceAuthor ${btoa("seed")}`,
      },
    });
    expect(res.status).toBe(201);
    const other = (res.headers.get("location") ?? "").split("/").at(-1) ?? "";
    await expectTry("tusTerminate", { params: { id: other } }, 204);
  });

  it("runs the webhook operations against a loopback receiver", async () => {
    const hook = await expectTry("createWebhook", { json: { url: origin.url("/status/204") } }, 201);
    const id = hook.id as string;
    await expectTry("listWebhooks", {}, 200);
    // An event makes a delivery (the outbox row exists once the API has answered).
    await create("event.txt", "text/plain", "an event");
    const { deliveries } = (await (await app.fetch(`/cms/v1.0/webhooks/${id}/deliveries`)).json()) as {
      deliveries: { id: string }[];
    };
    const deliveryId = deliveries[0]?.id ?? "";
    expect(deliveryId).not.toBe("");
    const listed = await expectTry("listWebhookDeliveries", { params: { id } }, 200);
    expect(JSON.stringify(listed.deliveries)).toContain(deliveryId);
    await expectTry("retryWebhookDelivery", { params: { id, deliveryId } }, 202);
    await expectTry("deleteWebhook", { params: { id } }, 204);
  });

  it("runs every content operation (GET, HEAD, by DTO, a package file's parent)", async () => {
    const text = await create("hello.txt", "text/plain", "hello from the explorer");
    const path = { context: text, path: "hello.txt" };
    for (const id of ["getData", "getDataHead", "getMultiPartData", "getMultiPartDataHead"])
      await expectTry(id, { params: path }, 200);
    await expectTry("getDataUuid", { params: { resourceUID: text } }, 200);
    await expectTry("getDataUuidHead", { params: { resourceUID: text } }, 200);
    await expectTry("getDataByDTO", { json: { resourceUID: text } }, 200);
    // A package: the answer is its first file, whose parent (getParentUuid) is the zip.
    const packageFile = await create(
      "pack.zip",
      "application/zip",
      await buildZip([
        { name: "info.json", data: Buffer.from('{"startpage":"index.txt"}'), method: 0 },
        { name: "index.txt", data: Buffer.from("in a zip"), method: 0 },
      ]),
    );
    await expectTry("getParentUuid", { text: packageFile }, 200);
  });

  it("locks a resource, renews the lock, updates the resource and unlocks it", async () => {
    const resourceUID = await create("notes.txt", "text/plain", "first words");
    const locked = await expectTry("lockResourceDTO", { json: { resourceUID, author: AUTHOR } }, 200);
    const lock = { resourceUID, author: AUTHOR, lockID: locked.lockID as string };
    expect(lock.lockID).toBeTruthy();
    await expectTry("renewResourceDtoLock", { json: lock }, 200);
    await expectTry("updateResource", { json: lock }, 200);
    await expectTry("unlockResourceDTO", { json: lock }, 204);
  });

  it("reads a resource's revisions and a revision's bytes (GET and HEAD)", async () => {
    const resourceUID = await create("history.txt", "text/plain", "revision one");
    const list = await expectTry("getRevisions", { params: { resourceUID } }, 200);
    expect(list.revisions).toHaveLength(1);
    // The revision number starts as its example (1): only the id is typed.
    const { url, init } = request("getRevisionData", { params: { resourceUID } });
    const data = await app.fetch(url, init);
    ran.add("getRevisionData");
    expect([data.status, await data.text()]).toEqual([200, "revision one"]);
    await expectTry("getRevisionDataHead", { params: { resourceUID } }, 200);
  });

  it("deletes a locked resource, then purges it", async () => {
    const resourceUID = await create("doomed.txt", "text/plain", "not for long");
    const { lockID } = await post("/cms/v1.0/lockResourceDTO", { resourceUID, author: AUTHOR }, 200);
    await expectTry("deleteResource", { json: { resourceUID, author: AUTHOR, lockID } }, 200);
    const purged = await expectTry("purgeResource", { json: { resourceUID } }, 200);
    expect(purged.purged).toContain(resourceUID);
  });

  it("takes a named lock, queries, renews and releases it", async () => {
    const uid = "explorer-named-lock";
    const taken = await expectTry("lockResource", { json: { uid, lockOwner: AUTHOR } }, 200);
    const lock = { uid, lockOwner: AUTHOR, lockID: taken.lockID as string };
    expect(lock.lockID).toBeTruthy();
    await expectTry("queryResourceLock", { json: { uid } }, 200);
    await expectTry("renewResourceLock", { json: lock }, 200);
    await expectTry("unlockResource", { json: lock }, 204);
  });

  it("describes and finds: updateResourceMetadata, searchResources, folders; tenants and a resource's access", async () => {
    const resourceUID = await create("sunset.txt", "text/plain", "described from the explorer");
    const patched = await expectTry(
      "updateResourceMetadata",
      { json: { resourceUID, patch: { title: "Evening sunset", tags: ["sky"], folder: "/photos/" } } },
      200,
    );
    expect(patched).toMatchObject({ title: "Evening sunset", tags: ["sky"], folder: "/photos/" });
    const found = await expectTry("searchResources", { params: { tenant: TENANT }, oneOf: { q: "evening" } }, 200);
    expect((found.items as { resourceUID: string }[]).map((r) => r.resourceUID)).toEqual([resourceUID]);
    const folders = await expectTry("folders", { params: { tenant: TENANT } }, 200);
    expect(JSON.stringify(folders.folders)).toContain("/photos/");
    const tenants = await expectTry("listTenants", {}, 200);
    expect(JSON.stringify(tenants)).toContain(TENANT);
    const access = await expectTry("getResourceAccess", { params: { resourceUID } }, 200);
    expect(access.lock).toBeNull();
  });

  it("uploads straight to storage: createUploadURL, the URL's PUT, completeUpload", async () => {
    const bytes = Buffer.from(`sent straight to storage ${crypto.randomUUID()}`);
    const ticket = await expectTry(
      "createUploadURL",
      {
        json: {
          resourceName: "direct.txt",
          resourceTenantId: TENANT,
          resourceAuthor: AUTHOR,
          size: bytes.length,
          sha256: createHash("sha256").update(bytes).digest("hex"),
        },
      },
      201,
    );
    // On the fs volume the URL is the service's own: its id and token are what the user pastes.
    const url = new URL(ticket.url as string);
    const uploadId = url.pathname.split("/").at(-1) ?? "";
    const token = url.searchParams.get("token") ?? "";
    await expectTry(
      "directUploadPut",
      {
        params: { uploadId, token },
        file: { name: "direct.txt", mimeType: "application/octet-stream", buffer: bytes },
      },
      204,
    );
    const done = await expectTry("completeUpload", { json: { uploadId: ticket.uploadId } }, 201);
    expect(done.size).toBe(bytes.length);
  });

  it("ran every operation of the document", () => {
    const ops = Object.values(doc.paths)
      .flatMap((item) => Object.values(item))
      .map((op) => op.operationId)
      .filter(Boolean);
    expect([...ran].sort()).toEqual(ops.sort());
  });
});
