/**
 * Who may do what, with real tokens from the dev IdP's password grant: every endpoint × role,
 * tenant confinement from the token's `tenants` claim, signed links and CMS_PUBLIC_READ.
 */
import sharp from "sharp";
import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Role } from "../../src/auth/principal.js";
import { createLinkSigner } from "../../src/auth/signed-links.js";
import { type AuthStack, bearer, LINK_SECRET, startAuthStack } from "../helpers/auth-stack.js";
import { API, base64, form, utf8 } from "../helpers/cms-client.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { scormZip } from "../helpers/packages.js";

let stack: AuthStack;
let origin: Origin;
const tokens: Record<string, string> = {};
const USERS = ["cms-admin", "cms-creator", "cms-consumer", "no-roles"] as const;
type User = (typeof USERS)[number];

beforeAll(async () => {
  origin = await startOrigin();
  stack = await startAuthStack({}, { transport: "in-process" });
  for (const user of [...USERS, "acme-creator"]) tokens[user] = await stack.passwordToken(user);
});
afterAll(async () => {
  await stack.close();
  await origin.close();
});
afterEach(() => expect(stack.app.unhandledErrors()).toEqual([]));

/** Any request, with the bearer token when there is one. */
const send = (
  token: string | null,
  method: string,
  path: string,
  body?: BodyInit,
  headers: Record<string, string> = {},
) => stack.app.fetch(stack.app.url(path), { method, headers: { ...(token ? bearer(token) : {}), ...headers }, body });

const call = (token: string | null, method: string, path: string, body?: unknown) =>
  send(
    token,
    method,
    path,
    body ? JSON.stringify(body) : undefined,
    body ? { "content-type": "application/json" } : {},
  );

const createBody = (tenant = "t1", name = "m.txt") => ({
  resourceAuthor: "matrix",
  resourceExternalURI: origin.put(`m-${tenant}-${name}`, `content of ${tenant}/${name}`),
  resourceMediaType: "text/plain",
  resourceName: name,
  resourceTenantId: tenant,
});

async function createAs(user: string, tenant = "t1", name = "m.txt") {
  const res = await call(tokens[user] as string, "POST", "/cms/v1.0/createResource", createBody(tenant, name));
  expect(res.status).toBe(201);
  return (await res.json()) as { resourceURI: string; resourceUID: string };
}

// ---- the permission matrix ----

/** The callers: the three roles, a valid token without any role, and no token at all. */
const WHO = ["admin", "creator", "consumer", "none", "anonymous"] as const;
type Who = (typeof WHO)[number];
type Statuses = Record<Who, number>;
/**
 * Whose resource a cell acts on: `own` = created by cms-creator (the creator's own), `other` = created
 * by cms-admin (someone else's, for the creator). `any` = the endpoint takes no existing resource.
 */
type Owner = "own" | "other";
/** `needs`: the role the route requires (its guard answers 403 insufficient_scope without it). */
type Row = { needs: Role } & ({ own: Statuses; other: Statuses } | { any: Statuses });

/**
 * THE MATRIX: expected status per endpoint × caller × owner. Named locks (lockResource & co.) are taken
 * on the resource's UID, so they follow the resource's owner. Columns: admin, creator, consumer,
 * none (token without roles), anonymous (no token).
 */
// prettier-ignore
const MATRIX = {
  "GET /apiversion": { needs: "consumer", any: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 } },
  "POST createResource (resourceExternalURI)": {
    needs: "creator",
    any: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST createResource (resourceBinary)": {
    needs: "creator",
    any: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST uploadResource": {
    needs: "creator",
    any: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
  },
  "GET listResources": {
    needs: "consumer",
    any: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST queryResource": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST createDataLink": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET getData": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "HEAD getData": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET getMultiPartData": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET getDataUuid": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST getData": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST getParentUuid": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST updateResource": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST deleteResource": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST purgeResource": {
    needs: "admin",
    own: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "GET getRevisions": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET resourceAccess": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET getRevisionData": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "POST lockResourceDTO": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST unlockResourceDTO": {
    needs: "creator",
    own: { admin: 204, creator: 204, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 204, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST renewResourceDtoLock": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST lockResource": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST unlockResource": {
    needs: "creator",
    own: { admin: 204, creator: 204, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 204, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST renewResourceLock": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST queryResourceLock": {
    needs: "consumer",
    own: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  // Usage: admins, or callers confined to the tenant (none of these users is confined: see beyond.security).
  "GET usage": { needs: "consumer", any: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 } },
  // The tenant list: the same rule (tenants.test.ts has the confined callers).
  "GET tenants": { needs: "consumer", any: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 } },
  // Describe and find (docs/search.md): metadata changes as updateResource; search and folders as listResources.
  "POST updateResourceMetadata": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "GET searchResources": {
    needs: "consumer",
    any: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  "GET folders": {
    needs: "consumer",
    any: { admin: 200, creator: 200, consumer: 200, none: 403, anonymous: 401 },
  },
  // Direct uploads (docs/direct-storage.md): "own"/"other" is whose upload URL it is.
  "POST createUploadURL": {
    needs: "creator",
    any: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST completeUpload": {
    needs: "creator",
    own: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 201, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  // tus uploads: "own"/"other" is whose upload it is.
  "POST uploads (tus)": {
    needs: "creator",
    any: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
  },
  "HEAD uploads/{id} (tus)": {
    needs: "creator",
    own: { admin: 200, creator: 200, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "PATCH uploads/{id} (tus)": {
    needs: "creator",
    own: { admin: 201, creator: 201, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 201, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "DELETE uploads/{id} (tus)": {
    needs: "creator",
    own: { admin: 204, creator: 204, consumer: 403, none: 403, anonymous: 401 },
    other: { admin: 204, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  // Webhook subscriptions: admins only. A retry of a delivery that does not exist is 404 past the guard.
  "POST webhooks": { needs: "admin", any: { admin: 201, creator: 403, consumer: 403, none: 403, anonymous: 401 } },
  "GET webhooks": { needs: "admin", any: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 } },
  "DELETE webhooks/{id}": {
    needs: "admin",
    any: { admin: 204, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "GET webhooks/{id}/deliveries": {
    needs: "admin",
    any: { admin: 200, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
  "POST webhooks/{id}/deliveries/{deliveryId}/retry": {
    needs: "admin",
    any: { admin: 404, creator: 403, consumer: 403, none: 403, anonymous: 401 },
  },
} satisfies Record<string, Row>;
type Endpoint = keyof typeof MATRIX;

const USER_OF: Record<Who, User | null> = {
  admin: "cms-admin",
  creator: "cms-creator",
  consumer: "cms-consumer",
  none: "no-roles",
  anonymous: null,
};
const ROLES_OF: Record<Who, readonly Role[]> = {
  admin: ["admin", "creator", "consumer"],
  creator: ["creator", "consumer"],
  consumer: ["consumer"],
  none: [],
  anonymous: [],
};
const OWNER_OF: Record<Owner, Who> = { own: "creator", other: "admin" };
const tokenOf = (who: Who) => (USER_OF[who] ? (tokens[USER_OF[who]] as string) : null);

/** What a cell acts on: a resource, maybe a live lock on it, maybe a file of a package (getParentUuid). */
interface Target {
  uid: string;
  uri: string;
  lock?: { lockID: string; author: string };
  fileUid?: string;
}
interface Cell {
  who: Who;
  owner: Owner | "any";
  expected: number;
}

interface Operation {
  /** As documented in /openapi.json (HEAD: the GET route it shares). */
  method: "GET" | "HEAD" | "POST" | "PATCH" | "DELETE";
  /** A HEAD of its own (tus), not a GET's twin: left out like the document's HEADs. */
  headOnly?: true;
  path: string;
  /** Fresh state for one cell of a mutating endpoint; read-only endpoints share one resource per owner. */
  prepare?: (cell: Cell & { owner: Owner }) => Promise<Target>;
  send: (token: string | null, target: Target) => Promise<Response>;
}

const ownerToken = (owner: Owner) => tokenOf(OWNER_OF[owner]);

async function freshResource(owner: Owner, fields: Record<string, unknown> = {}): Promise<Target> {
  const res = await call(ownerToken(owner), "POST", `${API}/createResource`, {
    resourceAuthor: "matrix",
    resourceMediaType: "text/plain",
    resourceName: "cell.txt",
    resourceTenantId: "t1",
    resourceBinary: base64(`a resource of ${owner}`),
    ...fields,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const { resourceUID, resourceURI } = (await res.json()) as { resourceUID: string; resourceURI: string };
  return { uid: resourceUID, uri: resourceURI };
}

async function lockedBy(who: Who, target: Target): Promise<Target> {
  const res = await call(tokenOf(who), "POST", `${API}/lockResourceDTO`, {
    resourceUID: target.uid,
    author: `lock of ${who}`,
  });
  expect(res.status, `${who} locking: ${await res.clone().text()}`).toBe(200);
  const { lockID, author } = (await res.json()) as { lockID: string; author: string };
  return { ...target, lock: { lockID, author } };
}

/** The caller's own lock where the cell expects success; the owner's where it expects a refusal. */
const lockForCell = async (cell: Cell & { owner: Owner }) =>
  lockedBy(cell.expected < 300 ? cell.who : OWNER_OF[cell.owner], await freshResource(cell.owner));
/** Always the owner's lock: an admin releasing the creator's lock is the force-unlock. */
const ownersLock = async (cell: Cell & { owner: Owner }) =>
  lockedBy(OWNER_OF[cell.owner], await freshResource(cell.owner));
const unlocked = (cell: Cell & { owner: Owner }) => freshResource(cell.owner);

const post = (verb: string, body: (t: Target) => unknown) => (token: string | null, t: Target) =>
  call(token, "POST", `${API}/${verb}`, body(t));
const get =
  (path: (t: Target) => string, method = "GET") =>
  (token: string | null, t: Target) =>
    send(token, method, `${API}/${path(t)}`);
const lockClaim = (t: Target) => ({ resourceUID: t.uid, ...(t.lock as { lockID: string; author: string }) });
const nameClaim = (t: Target) => ({ uid: t.uid, lockID: t.lock?.lockID, lockOwner: t.lock?.author });

const TUS = { "tus-resumable": "1.0.0" };
const tusMetadata = `tenant ${btoa("t1")},filename ${btoa("tus.txt")},author ${btoa("matrix")}`;
const startUpload = (token: string | null) =>
  send(token, "POST", `${API}/uploads`, undefined, { ...TUS, "upload-length": "3", "upload-metadata": tusMetadata });
/** A fresh 3-byte upload of the cell's owner; `uri` is its URL path. */
async function freshUpload(cell: Cell & { owner: Owner }): Promise<Target> {
  const res = await startUpload(ownerToken(cell.owner));
  expect(res.status, await res.clone().text()).toBe(201);
  return { uid: "", uri: res.headers.get("location") as string };
}

/** A subscription no event reaches (a tenant nobody uses), so the matrix's creates send nothing. */
const subscribe = (token: string | null) =>
  call(token, "POST", `${API}/webhooks`, { url: "http://127.0.0.1:9/hook", tenants: ["no-such-tenant"] });
async function freshSubscription(): Promise<Target> {
  const res = await subscribe(tokenOf("admin"));
  expect(res.status, await res.clone().text()).toBe(201);
  return { uid: ((await res.json()) as { id: string }).id, uri: "" };
}

/** An upload URL for `text` (random, so no cell's content dedupes against another's). */
const askUploadURL = (token: string | null, text: string) => {
  const bytes = new TextEncoder().encode(text);
  return call(token, "POST", `${API}/createUploadURL`, {
    resourceName: "direct.txt",
    resourceTenantId: "t1",
    resourceAuthor: "matrix",
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
};
/** The cell's owner's upload with its bytes sent (the URL is its own authorisation); `uid` is its id. */
async function sentUpload(cell: Cell & { owner: Owner }): Promise<Target> {
  const text = `direct ${crypto.randomUUID()}`;
  const res = await askUploadURL(ownerToken(cell.owner), text);
  expect(res.status, await res.clone().text()).toBe(201);
  const ticket = (await res.json()) as { uploadId: string; url: string; headers: Record<string, string> };
  const put = await stack.app.fetch(ticket.url, { method: "PUT", headers: ticket.headers, body: text });
  expect(put.status, await put.clone().text()).toBe(204);
  return { uid: ticket.uploadId, uri: "" };
}

const OPERATIONS: Record<Endpoint, Operation> = {
  "POST updateResourceMetadata": {
    method: "POST",
    path: `${API}/updateResourceMetadata`,
    prepare: unlocked,
    send: post("updateResourceMetadata", (t) => ({ resourceUID: t.uid, patch: { title: "described" } })),
  },
  "GET searchResources": {
    method: "GET",
    path: `${API}/searchResources`,
    send: get(() => "searchResources?tenant=t1&q=cell"),
  },
  "GET folders": { method: "GET", path: `${API}/folders`, send: get(() => "folders?tenant=t1") },
  "POST createUploadURL": {
    method: "POST",
    path: `${API}/createUploadURL`,
    send: (token) => askUploadURL(token, `direct ${crypto.randomUUID()}`),
  },
  "POST completeUpload": {
    method: "POST",
    path: `${API}/completeUpload`,
    prepare: sentUpload,
    send: post("completeUpload", (t) => ({ uploadId: t.uid })),
  },
  "GET usage": { method: "GET", path: `${API}/usage`, send: get(() => "usage?resourceTenantId=t1") },
  "GET tenants": { method: "GET", path: `${API}/tenants`, send: get(() => "tenants") },
  "POST webhooks": { method: "POST", path: `${API}/webhooks`, send: (token) => subscribe(token) },
  "GET webhooks": { method: "GET", path: `${API}/webhooks`, send: get(() => "webhooks") },
  "DELETE webhooks/{id}": {
    method: "DELETE",
    path: `${API}/webhooks/{id}`,
    prepare: freshSubscription,
    send: (token, t) => send(token, "DELETE", `${API}/webhooks/${t.uid}`),
  },
  "GET webhooks/{id}/deliveries": {
    method: "GET",
    path: `${API}/webhooks/{id}/deliveries`,
    prepare: freshSubscription,
    send: get((t) => `webhooks/${t.uid}/deliveries`),
  },
  "POST webhooks/{id}/deliveries/{deliveryId}/retry": {
    method: "POST",
    path: `${API}/webhooks/{id}/deliveries/{deliveryId}/retry`,
    prepare: freshSubscription,
    send: (token, t) => send(token, "POST", `${API}/webhooks/${t.uid}/deliveries/msg_none/retry`),
  },
  "POST uploads (tus)": { method: "POST", path: `${API}/uploads`, send: (token) => startUpload(token) },
  "HEAD uploads/{id} (tus)": {
    method: "HEAD",
    headOnly: true,
    path: `${API}/uploads/{id}`,
    prepare: freshUpload,
    send: (token, t) => send(token, "HEAD", t.uri, undefined, TUS),
  },
  "PATCH uploads/{id} (tus)": {
    method: "PATCH",
    path: `${API}/uploads/{id}`,
    prepare: freshUpload,
    send: (token, t) =>
      send(token, "PATCH", t.uri, "abc", {
        ...TUS,
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
      }),
  },
  "DELETE uploads/{id} (tus)": {
    method: "DELETE",
    path: `${API}/uploads/{id}`,
    prepare: freshUpload,
    send: (token, t) => send(token, "DELETE", t.uri, undefined, TUS),
  },
  "GET /apiversion": { method: "GET", path: "/apiversion", send: (token) => send(token, "GET", "/apiversion") },
  "POST createResource (resourceExternalURI)": {
    method: "POST",
    path: `${API}/createResource`,
    send: (token) => call(token, "POST", `${API}/createResource`, createBody("t1", "by-uri.txt")),
  },
  "POST createResource (resourceBinary)": {
    method: "POST",
    path: `${API}/createResource`,
    send: post("createResource", () => ({
      resourceAuthor: "matrix",
      resourceMediaType: "text/plain",
      resourceName: "inline.txt",
      resourceTenantId: "t1",
      resourceBinary: base64("inline"),
    })),
  },
  "POST uploadResource": {
    method: "POST",
    path: `${API}/uploadResource`,
    send: (token) =>
      send(
        token,
        "POST",
        `${API}/uploadResource`,
        form(
          { resourceAuthor: "matrix", resourceTenantId: "t1" },
          { bytes: utf8("uploaded"), name: "u.txt", type: "text/plain" },
        ),
      ),
  },
  "GET listResources": {
    method: "GET",
    path: `${API}/listResources`,
    send: get(() => "listResources?resourceTenantId=t1"),
  },
  "POST queryResource": {
    method: "POST",
    path: `${API}/queryResource`,
    send: post("queryResource", (t) => ({ queryUID: t.uid })),
  },
  "POST createDataLink": {
    method: "POST",
    path: `${API}/createDataLink`,
    send: post("createDataLink", (t) => ({ resourceURI: t.uri })),
  },
  "GET getData": { method: "GET", path: `${API}/getData/{context}/{path}`, send: get((t) => `getData/${t.uri}`) },
  "HEAD getData": {
    method: "HEAD",
    path: `${API}/getData/{context}/{path}`,
    send: get((t) => `getData/${t.uri}`, "HEAD"),
  },
  "GET getMultiPartData": {
    method: "GET",
    path: `${API}/getMultiPartData/{context}/{path}`,
    send: get((t) => `getMultiPartData/${t.uri}`),
  },
  "GET getDataUuid": {
    method: "GET",
    path: `${API}/getDataUuid/{resourceUID}`,
    send: get((t) => `getDataUuid/${t.uid}`),
  },
  "POST getData": { method: "POST", path: `${API}/getData`, send: post("getData", (t) => ({ resourceUID: t.uid })) },
  "POST getParentUuid": {
    method: "POST",
    path: `${API}/getParentUuid`,
    send: (token, t) => send(token, "POST", `${API}/getParentUuid`, t.fileUid, { "content-type": "text/plain" }),
  },
  "POST updateResource": {
    method: "POST",
    path: `${API}/updateResource`,
    prepare: lockForCell,
    send: post("updateResource", (t) => ({
      ...lockClaim(t),
      resourceAuthor: "updated",
      resourceBinary: base64("updated content"),
    })),
  },
  "POST deleteResource": {
    method: "POST",
    path: `${API}/deleteResource`,
    prepare: lockForCell,
    send: post("deleteResource", lockClaim),
  },
  "POST purgeResource": {
    method: "POST",
    path: `${API}/purgeResource`,
    prepare: unlocked,
    send: post("purgeResource", (t) => ({ resourceUID: t.uid })),
  },
  "GET getRevisions": {
    method: "GET",
    path: `${API}/getRevisions/{resourceUID}`,
    send: get((t) => `getRevisions/${t.uid}`),
  },
  "GET resourceAccess": {
    method: "GET",
    path: `${API}/resourceAccess/{resourceUID}`,
    send: get((t) => `resourceAccess/${t.uid}`),
  },
  "GET getRevisionData": {
    method: "GET",
    path: `${API}/getRevisionData/{resourceUID}/{revision}`,
    send: get((t) => `getRevisionData/${t.uid}/1`),
  },
  "POST lockResourceDTO": {
    method: "POST",
    path: `${API}/lockResourceDTO`,
    prepare: unlocked,
    send: post("lockResourceDTO", (t) => ({ resourceUID: t.uid, author: "matrix" })),
  },
  "POST unlockResourceDTO": {
    method: "POST",
    path: `${API}/unlockResourceDTO`,
    prepare: ownersLock,
    send: post("unlockResourceDTO", lockClaim),
  },
  "POST renewResourceDtoLock": {
    method: "POST",
    path: `${API}/renewResourceDtoLock`,
    prepare: lockForCell,
    send: post("renewResourceDtoLock", lockClaim),
  },
  "POST lockResource": {
    method: "POST",
    path: `${API}/lockResource`,
    prepare: unlocked,
    send: post("lockResource", (t) => ({ uid: t.uid, lockOwner: "matrix" })),
  },
  "POST unlockResource": {
    method: "POST",
    path: `${API}/unlockResource`,
    prepare: ownersLock,
    send: post("unlockResource", nameClaim),
  },
  "POST renewResourceLock": {
    method: "POST",
    path: `${API}/renewResourceLock`,
    prepare: lockForCell,
    send: post("renewResourceLock", nameClaim),
  },
  "POST queryResourceLock": {
    method: "POST",
    path: `${API}/queryResourceLock`,
    send: post("queryResourceLock", (t) => ({ uid: t.uid })),
  },
};

/** How a refusal must look: the problem code, and the RFC 6750 challenge (insufficient_scope only for a missing role). */
function refusalMistakes(cell: Cell, needs: Role, res: Response, text: string): string[] {
  const at = `${cell.who}/${cell.owner}`;
  const mistakes: string[] = [];
  const type = res.headers.get("content-type");
  const challenge = res.headers.get("www-authenticate");
  const code = res.status >= 400 && text ? (JSON.parse(text) as { code?: string }).code : undefined;
  if (res.status === 401) {
    if (type !== "application/problem+json") mistakes.push(`${at}: 401 content-type ${type}`);
    if (text && code !== "UNAUTHENTICATED") mistakes.push(`${at}: 401 code ${code}`);
    if (challenge !== 'Bearer realm="CMS"') mistakes.push(`${at}: 401 challenge ${challenge}`);
  } else if (res.status === 403) {
    if (type !== "application/problem+json") mistakes.push(`${at}: 403 content-type ${type}`);
    if (text && code !== "FORBIDDEN") mistakes.push(`${at}: 403 code ${code}`);
    const roleMissing = !ROLES_OF[cell.who].includes(needs);
    if (roleMissing && !challenge?.includes('error="insufficient_scope"'))
      mistakes.push(`${at}: 403 without insufficient_scope (${challenge})`);
    if (!roleMissing && challenge !== null) mistakes.push(`${at}: ownership 403 with a challenge (${challenge})`);
  } else if (res.status < 300 && type === "application/problem+json") {
    mistakes.push(`${at}: ${res.status} with a problem body`);
  }
  return mistakes;
}

describe("permission matrix: every endpoint × caller × own/other resource", () => {
  const shared = {} as Record<Owner, Target>;
  beforeAll(async () => {
    // Read-only endpoints share, per owner: a resource (locked by its owner, for queryResourceLock) and a package file.
    await Promise.all(
      (["own", "other"] as const).map(async (owner) => {
        const [resource, pkg] = await Promise.all([
          freshResource(owner).then((t) => lockedBy(OWNER_OF[owner], t)),
          scormZip().then((zip) =>
            freshResource(owner, {
              resourceName: "p.zip",
              resourceMediaType: "application/zip",
              resourceBinary: base64(zip),
            }),
          ),
        ]);
        shared[owner] = { ...resource, fileUid: pkg.uid };
      }),
    );
  });

  for (const [endpoint, row] of Object.entries(MATRIX) as [Endpoint, Row][]) {
    it(`${endpoint} (route needs ${row.needs})`, async () => {
      const operation = OPERATIONS[endpoint];
      const expected: Partial<Record<Owner | "any", Statuses>> =
        "any" in row ? { any: row.any } : { own: row.own, other: row.other };
      const cells: Cell[] = Object.entries(expected).flatMap(([owner, statuses]) =>
        WHO.map((who) => ({ who, owner: owner as Owner | "any", expected: statuses[who] })),
      );
      // Every cell concurrently, each on its own fresh state where the endpoint changes something.
      const settled = await Promise.allSettled(
        cells.map(async (cell) => {
          // An `any` endpoint prepares state that belongs to no resource owner (a webhook subscription).
          const owner = cell.owner === "any" ? "own" : cell.owner;
          const target: Target = operation.prepare
            ? await operation.prepare({ ...cell, owner })
            : cell.owner === "any"
              ? { uid: "", uri: "" }
              : shared[cell.owner];
          const res = await operation.send(tokenOf(cell.who), target);
          return { cell, res, text: await res.text() };
        }),
      );
      const failed = settled.find((s) => s.status === "rejected");
      if (failed) throw failed.reason;
      const results = settled.map(
        (s) => (s as PromiseFulfilledResult<{ cell: Cell; res: Response; text: string }>).value,
      );

      const actual = Object.fromEntries(
        Object.keys(expected).map((owner) => [
          owner,
          Object.fromEntries(results.filter((r) => r.cell.owner === owner).map((r) => [r.cell.who, r.res.status])),
        ]),
      );
      const unexpected = results
        .filter((r) => r.res.status !== r.cell.expected)
        .map((r) => `${r.cell.who}/${r.cell.owner}: ${r.res.status} ${r.text.slice(0, 200)}`);
      expect(actual, unexpected.join("\n")).toEqual(expected);
      expect(results.flatMap((r) => refusalMistakes(r.cell, row.needs, r.res, r.text))).toEqual([]);
    });
  }

  it("covers every protected operation in /openapi.json (and only /healthz, /readyz, tus OPTIONS and the signed upload URL are public)", async () => {
    const doc = (await (await stack.app.fetch(stack.app.url("/openapi.json"))).json()) as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      // A documented HEAD is its GET's twin (same guard), so the GET cells cover it.
      Object.entries(ops)
        .filter(([method]) => method !== "head")
        .map(([method, op]) => ({
          key: `${method.toUpperCase()} ${path}`,
          isProtected: (op.security?.length ?? 0) > 0,
        })),
    );
    const covered = new Set(
      Object.values(OPERATIONS)
        .filter((o) => !o.headOnly)
        .map((o) => `${o.method === "HEAD" ? "GET" : o.method} ${o.path}`),
    );
    expect([...covered].sort()).toEqual(
      documented
        .filter((o) => o.isProtected)
        .map((o) => o.key)
        .sort(),
    );
    // tus capability discovery (OPTIONS) is public by the protocol; an upload URL's PUT carries its
    // own authorisation (a signed, single-upload token), as a bucket's presigned PUT would.
    expect(
      documented
        .filter((o) => !o.isProtected)
        .map((o) => o.key)
        .sort(),
    ).toEqual(["GET /healthz", "GET /readyz", "OPTIONS /cms/v1.0/uploads", "PUT /cms/v1.0/directUploads/{uploadId}"]);
  });

  it("records the token's subject as owner, never a request field", async () => {
    const res = await call(tokens["cms-creator"] as string, "POST", "/cms/v1.0/createResource", {
      ...createBody("t1", "own.txt"),
      owner: "cms-admin",
    });
    expect(res.status).toBe(201);
    const { resourceUID } = (await res.json()) as { resourceUID: string };
    const row = await stack.app.deps.store.findByUid(resourceUID);
    expect(row?.owner).toBe("cms-creator");
  });
});

describe("tenant confinement (tenants claim)", () => {
  it("lets a confined creator work in its tenant only", async () => {
    const acme = tokens["acme-creator"] as string;
    expect((await call(acme, "POST", "/cms/v1.0/createResource", createBody("acme", "a.txt"))).status).toBe(201);
    const other = await call(acme, "POST", "/cms/v1.0/createResource", createBody("t1", "a.txt"));
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses a confined caller another tenant's content and links (403), but not its own", async () => {
    const foreign = await createAs("cms-admin", "t1", "foreign.txt");
    const acme = tokens["acme-creator"] as string;
    expect((await call(acme, "GET", `/cms/v1.0/getData/${foreign.resourceURI}`)).status).toBe(403);
    expect((await call(acme, "POST", "/cms/v1.0/createDataLink", { resourceURI: foreign.resourceURI })).status).toBe(
      403,
    );
    const own = await createAs("acme-creator", "acme", "mine.txt");
    expect((await call(acme, "GET", `/cms/v1.0/getData/${own.resourceURI}`)).status).toBe(200);
  });
});

describe("signed links", () => {
  let target: { resourceURI: string };
  let other: { resourceURI: string };
  beforeAll(async () => {
    target = await createAs("cms-creator", "t1", "linked.txt");
    other = await createAs("cms-creator", "t1", "other.txt");
  });

  async function mint(resourceURI: string, expiresIn?: number) {
    const res = await call(tokens["cms-consumer"] as string, "POST", "/cms/v1.0/createDataLink", {
      resourceURI,
      expiresIn,
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { url: string; expires: string };
  }

  it("works without any header, for GET and HEAD, until it expires", async () => {
    const link = await mint(target.resourceURI, 600);
    expect(new Date(link.expires).getTime() - Date.now()).toBeGreaterThan(590_000);
    const res = await stack.app.fetch(link.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("content of t1/linked.txt");
    expect((await stack.app.fetch(link.url, { method: "HEAD" })).status).toBe(200);
    // Without the link's query the same path still needs a token.
    expect((await stack.app.fetch(link.url.split("?")[0] as string)).status).toBe(401);
  });

  it("refuses an expired link", async () => {
    const signer = await createLinkSigner(LINK_SECRET);
    const path = `/cms/v1.0/getData/${target.resourceURI}`;
    const expired = await signer.sign(path, Math.floor(Date.now() / 1000) - 1);
    const res = await stack.app.fetch(stack.app.url(`${path}?${expired}`));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("refuses a tampered signature or expiry, and another resource's path", async () => {
    const link = new URL((await mint(target.resourceURI)).url);
    const tampered = new URL(link);
    const sig = tampered.searchParams.get("signature") as string;
    tampered.searchParams.set("signature", `${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`);
    expect((await stack.app.fetch(tampered)).status).toBe(403);

    const extended = new URL(link);
    extended.searchParams.set("expires", String(Number(link.searchParams.get("expires")) + 3600));
    expect((await stack.app.fetch(extended)).status).toBe(403);

    const otherPath = new URL(`/cms/v1.0/getData/${other.resourceURI}${link.search}`, link);
    expect((await stack.app.fetch(otherPath)).status).toBe(403);
  });

  it("refuses link lifetimes over 7 days", async () => {
    const res = await call(tokens["cms-consumer"] as string, "POST", "/cms/v1.0/createDataLink", {
      resourceURI: target.resourceURI,
      expiresIn: 8 * 24 * 3600,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { pointer: string }[] }).errors[0]?.pointer).toBe("/json/expiresIn");
  });
});

describe("CMS_PUBLIC_READ=true", () => {
  it("serves getData without a token while writes still need one", async () => {
    const open = await startAuthStack({ CMS_PUBLIC_READ: "true" }, { transport: "in-process" });
    try {
      const token = await open.passwordToken("cms-creator");
      const created = await open.app.fetch(open.app.url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(token) },
        body: JSON.stringify(createBody("pub", "p.txt")),
      });
      expect(created.status).toBe(201);
      const { resourceURI, versionedURI } = (await created.json()) as { resourceURI: string; versionedURI: string };
      const mutable = await open.app.fetch(open.app.url(`/cms/v1.0/getData/${resourceURI}`));
      expect(mutable.status).toBe(200);
      // Public reads are public to caches too (issue 28): shared caches may keep what anyone may read.
      expect(mutable.headers.get("cache-control")).toBe("public, no-cache");
      const versioned = await open.app.fetch(open.app.url(`/cms/v1.0/getData/${versionedURI}`));
      expect(versioned.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const anonymous = await open.app.fetch(open.app.url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(createBody("pub", "q.txt")),
      });
      expect(anonymous.status).toBe(401);
    } finally {
      await open.close();
    }
  });
});

describe("image derivatives behind auth (issue 30), over a real socket (the Node fast path in front)", () => {
  it("are read as their source is: the token's roles and tenants, never an anonymous cached copy", async () => {
    const real = await startAuthStack({});
    try {
      const [admin, acme] = await Promise.all([real.passwordToken("cms-admin"), real.passwordToken("acme-creator")]);
      const png = await sharp({ create: { width: 40, height: 20, channels: 3, background: "#36c" } })
        .png()
        .toBuffer();
      const created = await real.app.fetch(real.app.url("/cms/v1.0/createResource"), {
        method: "POST",
        headers: { "content-type": "application/json", ...bearer(admin) },
        body: JSON.stringify({
          resourceAuthor: "matrix",
          resourceBinary: png.toString("base64"),
          resourceMediaType: "image/png",
          resourceName: "pic.png",
          resourceTenantId: "t1",
        }),
      });
      expect(created.status).toBe(201);
      const { resourceURI } = (await created.json()) as { resourceURI: string };
      const derivative = (token?: string) =>
        real.app.fetch(real.app.url(`/cms/v1.0/getData/${resourceURI}?width=10&format=webp`), {
          headers: token ? bearer(token) : {},
        });
      const made = await derivative(admin);
      expect(made.status).toBe(200);
      expect(made.headers.get("content-type")).toBe("image/webp");
      expect(made.headers.get("cache-control")).toBe("private, no-cache");
      // Made and stored now: still refused without a token, and to a caller confined to another tenant.
      for (let i = 0; i < 2; i++) {
        const anonymous = await derivative();
        expect(anonymous.status).toBe(401);
        expect(anonymous.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect((await derivative(acme)).status).toBe(403);
      }
      expect((await derivative(admin)).status).toBe(200);
    } finally {
      await real.close();
    }
  });
});

describe("signed links over a real socket, auth on (the Node fast path answers valid ones)", () => {
  it("read with no token until changed or moved, and never open the path without one", async () => {
    const real = await startAuthStack({});
    try {
      const [admin, consumer] = await Promise.all([
        real.passwordToken("cms-admin"),
        real.passwordToken("cms-consumer"),
      ]);
      const post = (path: string, token: string, body: unknown) =>
        real.app.fetch(real.app.url(path), {
          method: "POST",
          headers: { "content-type": "application/json", ...bearer(token) },
          body: JSON.stringify(body),
        });
      const uriOf = async (name: string) => {
        const created = await post("/cms/v1.0/createResource", admin, {
          resourceAuthor: "matrix",
          resourceBinary: Buffer.from(`content of ${name}`).toString("base64"),
          resourceMediaType: "text/plain",
          resourceName: name,
          resourceTenantId: "t1",
        });
        expect(created.status).toBe(201);
        return ((await created.json()) as { resourceURI: string }).resourceURI;
      };
      const [uri, otherUri] = await Promise.all([uriOf("socket-linked.txt"), uriOf("socket-other.txt")]);
      const minted = await post("/cms/v1.0/createDataLink", consumer, { resourceURI: uri, expiresIn: 600 });
      expect(minted.status).toBe(200);
      const url = new URL(((await minted.json()) as { url: string }).url);
      const get = (path: string, init: RequestInit = {}) => real.app.fetch(real.app.url(path), init);
      const linked = `${url.pathname}${url.search}`;
      // Twice: the first read fills the small-blob cache, the second is the fast path's own answer.
      for (let i = 0; i < 2; i++) {
        const res = await get(linked);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe("content of socket-linked.txt");
        expect(res.headers.get("cache-control")).toMatch(/^private, max-age=(59\d|600)$/);
      }
      expect((await get(linked, { method: "HEAD" })).status).toBe(200);
      // Without its query, the path needs a token; a changed signature or another path is refused.
      expect((await get(url.pathname)).status).toBe(401);
      const tampered = linked.replace(/signature=(.)/, (_m, c: string) => `signature=${c === "A" ? "B" : "A"}`);
      const refused = await get(tampered);
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect((await get(`/cms/v1.0/getData/${otherUri}${url.search}`)).status).toBe(403);
      // An image parameter beside the link: a link's holder may name presets only.
      expect((await get(`${linked}&width=8`)).status).toBe(403);
    } finally {
      await real.close();
    }
  });
});
