/**
 * A small client for the anchor's RPC endpoints over a real socket, plus the assertions every route
 * test makes on problem documents and on what the volume and database hold.
 */
import { readdirLive } from "./live-dir.js";
import { createClient } from "@libsql/client";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { type Origin, startOrigin } from "./origin.js";
import type { TestApp, TestAppOptions } from "./test-app.js";

export const API = "/cms/v1.0";

export interface Problem {
  status: number;
  code: string;
  detail: string;
  errors?: { pointer: string; detail: string }[];
}

export interface ResourceDto {
  resourceUID: string;
  author: string;
  resourceURI: string;
  resourcesList: ResourceDto[] | null;
  mediaType: string;
  size: number;
  sha256: string;
}

export interface LockedDto {
  resourceUID: string;
  author: string;
  resourceURI: string;
  lockID: string;
  lockExpirationDate: string;
  resourceName: string;
}

export const utf8 = (s: string) => new TextEncoder().encode(s);
export const base64 = (bytes: Uint8Array | string) =>
  Buffer.from(typeof bytes === "string" ? utf8(bytes) : bytes).toString("base64");

/** Asserts a problem+json answer with `status` and `code`; returns the document for further checks. */
export async function expectProblem(res: Response, status: number, code: string, pointer?: string): Promise<Problem> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = JSON.parse(text) as Problem;
  expect(body.status).toBe(status);
  expect(body.code).toBe(code);
  expect(text).not.toMatch(/at .*\.(ts|js):\d+/); // never a stack trace
  if (pointer) expect(body.errors?.map((e) => e.pointer)).toContain(pointer);
  return body;
}

export interface Client {
  post(verb: string, body: unknown): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** createResource with defaults for every field (inline `content`), overridden by `fields`; not asserted. */
  postCreate(fields?: Record<string, unknown>, content?: string | Uint8Array): Promise<Response>;
  /** postCreate, asserting 201. */
  create(fields?: Record<string, unknown>, content?: string | Uint8Array): Promise<ResourceDto>;
  /** lockResourceDTO; asserts 200. */
  lock(uid: string, author?: string): Promise<LockedDto>;
  /** The bytes of getData for a resourceURI (asserting 200). */
  data(resourceURI: string): Promise<Uint8Array>;
}

/**
 * Where a client sends: a TestApp (either transport), or a server known only by URL (a spawned
 * process), which the global fetch reaches.
 */
export type ClientTarget = Pick<TestApp, "url"> & Partial<Pick<TestApp, "fetch">>;

/** `token` (when given) goes into every request's Authorization header. */
export function cmsClient(app: ClientTarget, tenant: string, token?: string): Client {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const fetch = app.fetch ?? globalThis.fetch;
  const client: Client = {
    post: (verb, body) =>
      fetch(app.url(`${API}/${verb}`), {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify(body),
      }),
    get: (path, headers = {}) =>
      fetch(app.url(path.startsWith("/") ? path : `${API}/${path}`), { headers: { ...auth, ...headers } }),
    postCreate: (fields = {}, content = "hello") =>
      client.post("createResource", {
        resourceAuthor: "Author",
        resourceMediaType: "text/plain",
        resourceName: "a.txt",
        resourceTenantId: tenant,
        resourceBinary: base64(content),
        ...fields,
      }),
    async create(fields = {}, content) {
      const res = await client.postCreate(fields, content);
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as ResourceDto;
    },
    async lock(uid, author = "Author") {
      const res = await client.post("lockResourceDTO", { resourceUID: uid, author });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as LockedDto;
    },
    async data(resourceURI) {
      const res = await client.get(`getData/${resourceURI}`);
      expect(res.status, resourceURI).toBe(200);
      return new Uint8Array(await res.arrayBuffer());
    },
  };
  return client;
}

/** Every blob file under the volume (driver bookkeeping such as `.tmp/` and `.cms-owner` excluded). */
export async function volumeFiles(app: TestApp): Promise<string[]> {
  const entries = await readdirLive(app.volume);
  return entries
    .filter((e) => e.isFile() && !e.parentPath.includes("/.") && !e.name.startsWith("."))
    .map((e) => `${e.parentPath}/${e.name}`)
    .sort();
}

/** One text/plain resource per text for `tenant` (inline createResource at `baseUrl`): their URIs, each beside its text. */
export async function createTexts(
  baseUrl: string,
  tenant: string,
  texts: string[],
): Promise<{ uri: string; text: string }[]> {
  const created: { uri: string; text: string }[] = [];
  for (const [i, text] of texts.entries()) {
    const res = await fetch(`${baseUrl}${API}/createResource`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        resourceAuthor: "A",
        resourceMediaType: "text/plain",
        resourceName: `b${i}.txt`,
        resourceTenantId: tenant,
        resourceBinary: btoa(text),
      }),
    });
    expect(res.status).toBe(201);
    created.push({ uri: ((await res.json()) as ResourceDto).resourceURI, text });
  }
  return created;
}

/** Row counts of every table, read through a separate connection. */
export async function tableCounts(app: TestApp): Promise<Record<string, number>> {
  const client = createClient({ url: app.databaseUrl });
  try {
    const out: Record<string, number> = {};
    for (const table of ["resources", "revisions", "locks"]) {
      const { rows } = await client.execute(`select count(*) as n from ${table}`);
      out[table] = Number(rows[0]?.n);
    }
    return out;
  } finally {
    client.close();
  }
}

/** A multipart form: the fields, then an optional `file` part, then any `after` fields. */
export function form(
  fields: Record<string, string>,
  file?: { bytes: Uint8Array; name?: string; type?: string },
  after: Record<string, string> = {},
) {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  if (file)
    data.append(
      "file",
      new Blob([file.bytes as Uint8Array<ArrayBuffer>], file.type ? { type: file.type } : {}),
      file.name ?? "upload.bin",
    );
  for (const [k, v] of Object.entries(after)) data.append(k, v);
  return data;
}

/** POST uploadResource with a form (or any raw body). */
export const upload = (target: TestApp, body: BodyInit, headers: Record<string, string> = {}) =>
  target.fetch(target.url(`${API}/uploadResource`), { method: "POST", body, headers });

/** What a route test file shares: a loopback origin, the real app (options.transport: socket by default), and a client for one tenant. */
export interface CmsHarness {
  readonly app: TestApp;
  readonly origin: Origin;
  readonly cms: Client;
}

/**
 * Registers the file's hooks: starts an origin and an app (with `env`) once, closes both at the end,
 * and fails any test after which the app logged an unhandled error.
 */
export function useCmsApp(tenant: string, env: Record<string, string> = {}, options: TestAppOptions = {}): CmsHarness {
  const h = {} as { app: TestApp; origin: Origin; cms: Client };
  beforeAll(async () => {
    h.origin = await startOrigin();
    // Imported here: the files that only talk to spawned servers through this client never load the app.
    const { startTestApp } = await import("./test-app.js");
    h.app = await startTestApp(env, options);
    h.cms = cmsClient(h.app, tenant);
  });
  afterAll(async () => {
    await h.app?.close();
    await h.origin?.close();
  });
  afterEach(() => expect(h.app.unhandledErrors()).toEqual([]));
  return h;
}
