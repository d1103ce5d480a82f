/**
 * Whose resource a tus upload becomes (issue 25 §1.4): its creator's, whoever sends the PATCH
 * that completes it (an admin may continue anyone's upload). Real IdP keys, real server, 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";
import { API } from "../helpers/cms-client.js";

let stack: AuthStack;
beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
});
afterAll(async () => stack?.close());

const TUS = { "tus-resumable": "1.0.0" };
const call = (token: string, verb: string, body: unknown) =>
  stack.app.fetch(stack.app.url(`${API}/${verb}`), {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("tus ownership", () => {
  it("an upload its creator started and an admin finished belongs to the creator", async () => {
    const creator = await stack.forge({ sub: "alice", resource_access: { "cms-server": { roles: ["creator"] } } });
    const admin = await stack.forge({ sub: "root", resource_access: { "cms-server": { roles: ["admin"] } } });
    const meta = `tenant ${btoa("own")},filename ${btoa("mine.txt")},author ${btoa("Alice")}`;
    const start = await stack.app.fetch(stack.app.url(`${API}/uploads`), {
      method: "POST",
      headers: { ...TUS, ...bearer(creator), "upload-length": "4", "upload-metadata": meta },
    });
    expect(start.status).toBe(201);
    const url = stack.app.url(start.headers.get("location") as string);
    expect(
      (
        await stack.app.fetch(url, {
          method: "PATCH",
          headers: {
            ...TUS,
            ...bearer(creator),
            "content-type": "application/offset+octet-stream",
            "upload-offset": "0",
          },
          body: "mi",
        })
      ).status,
    ).toBe(204);
    const last = await stack.app.fetch(url, {
      method: "PATCH",
      headers: { ...TUS, ...bearer(admin), "content-type": "application/offset+octet-stream", "upload-offset": "2" },
      body: "ne",
    });
    expect(last.status).toBe(201);
    const { resourceUID } = (await last.json()) as { resourceUID: string };

    const lock = await call(creator, "lockResourceDTO", { resourceUID, author: "Alice" });
    expect(lock.status, await lock.clone().text()).toBe(200);
    const { lockID } = (await lock.json()) as { lockID: string };
    expect((await call(creator, "unlockResourceDTO", { resourceUID, author: "Alice", lockID })).status).toBe(204);
    // Another creator is still no owner of it.
    const bob = await stack.forge({ sub: "bob", resource_access: { "cms-server": { roles: ["creator"] } } });
    expect((await call(bob, "lockResourceDTO", { resourceUID, author: "Bob" })).status).toBe(403);
  });
});
