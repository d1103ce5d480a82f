/**
 * Who may create and complete a direct upload (docs/direct-storage.md): creators, within their
 * tenants; only the upload's creator or an admin completes it, and the resource is the creator's.
 * Real IdP keys, the real app (in-process).
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API, expectProblem } from "../helpers/cms-client.js";

let stack: AuthStack;
beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
});
afterAll(async () => stack?.close());

const call = (token: string | null, verb: string, body: unknown) =>
  stack.app.fetch(stack.app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { ...(token ? bearer(token) : {}), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const role = (sub: string, roles: string[], extra: Record<string, unknown> = {}) =>
  stack.forge({ sub, resource_access: { "cms-server": { roles } }, ...extra });

async function uploaded(token: string, text: string): Promise<string> {
  const bytes = new TextEncoder().encode(text);
  const res = await call(token, "createUploadURL", {
    resourceName: "owned.txt",
    resourceTenantId: "own",
    resourceAuthor: "Alice",
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const ticket = (await res.json()) as { uploadId: string; url: string; headers: Record<string, string> };
  // The URL is its own authorisation: no token goes with the bytes.
  const put = await stack.app.fetch(ticket.url, { method: "PUT", headers: ticket.headers, body: bytes });
  expect(put.status).toBe(204);
  return ticket.uploadId;
}

describe("direct upload ownership", () => {
  it("needs a token and the creator role, within the caller's tenants", async () => {
    const body = { resourceName: "a", resourceTenantId: "own", resourceAuthor: "A", size: 1, sha256: "0".repeat(64) };
    await expectProblem(await call(null, "createUploadURL", body), 401, "UNAUTHENTICATED");
    await expectProblem(await call(await role("carol", ["consumer"]), "createUploadURL", body), 403, "FORBIDDEN");
    const confined = await role("dave", ["creator"], { tenants: ["elsewhere"] });
    await expectProblem(await call(confined, "createUploadURL", body), 403, "FORBIDDEN");
  });

  it("another creator may not complete it (403); an admin may, and the resource is the creator's", async () => {
    const alice = await role("alice", ["creator"]);
    const bob = await role("bob", ["creator"]);
    const admin = await role("root", ["admin"]);
    const uploadId = await uploaded(alice, `alice's ${crypto.randomUUID()}`);
    await expectProblem(await call(bob, "completeUpload", { uploadId }), 403, "FORBIDDEN");
    const done = await call(admin, "completeUpload", { uploadId });
    expect(done.status, await done.clone().text()).toBe(201);
    const { resourceUID } = (await done.json()) as { resourceUID: string };
    // Alice owns it: she may lock it, Bob may not.
    const lock = await call(alice, "lockResourceDTO", { resourceUID, author: "Alice" });
    expect(lock.status, await lock.clone().text()).toBe(200);
    await expectProblem(await call(bob, "lockResourceDTO", { resourceUID, author: "Bob" }), 403, "FORBIDDEN");
  });
});
