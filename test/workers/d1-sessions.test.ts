/**
 * Issue 28 §4: D1 reads through the Sessions API (`withSession`), a writer reading its own writes.
 * A request that writes starts its session on the primary (`first-primary`); the answer carries the
 * session's bookmark (`X-D1-Bookmark`), and a request sending it back starts from that bookmark, so
 * a replica answering it has the write. Other reads take any replica (`first-unconstrained`).
 * Miniflare's D1 is one database with no replicas: this shows the sessions and bookmarks the Worker
 * uses (workerd's own D1 session client, miniflare's bookmarks), not replica lag.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";

const API = "http://d1.test/cms/v1.0";
beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

/** env.DB with each withSession argument recorded in `sessions`. */
function recording<T extends object>(db: T, sessions: (string | undefined)[]): T {
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "withSession" || typeof value !== "function")
        return typeof value === "function" ? value.bind(target) : value;
      return (constraint?: string) => {
        sessions.push(constraint);
        return value.call(target, constraint);
      };
    },
  });
}

describe("D1 through the Sessions API", () => {
  it("a write starts on the primary and hands back its bookmark; a read sent with it starts there", async () => {
    const sessions: (string | undefined)[] = [];
    const bindings = { ...env, DB: recording(env.DB, sessions) };
    const app = createWorkerApp();
    const created = await app.fetch(
      new Request(`${API}/createResource`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          resourceAuthor: "a",
          resourceBinary: btoa("my own write"),
          resourceMediaType: "text/plain",
          resourceName: "s.txt",
          resourceTenantId: "d1",
        }),
      }),
      bindings,
    );
    expect(created.status).toBe(201);
    expect(sessions).toEqual(["first-primary"]);
    const bookmark = created.headers.get("x-d1-bookmark");
    expect(bookmark).toBeTruthy();
    const { resourceURI } = (await created.json()) as { resourceURI: string };

    // On another isolate (a second app: this one keeps the row it just wrote in memory).
    const other = createWorkerApp();
    const read = await other.fetch(
      new Request(`${API}/getData/${resourceURI}`, { headers: { "x-d1-bookmark": bookmark as string } }),
      bindings,
    );
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("my own write");
    expect(sessions).toEqual(["first-primary", bookmark]);
    // At least as new as the write's.
    expect((read.headers.get("x-d1-bookmark") as string) >= (bookmark as string)).toBe(true);

    const anyone = await createWorkerApp().fetch(new Request(`${API}/getData/${resourceURI}`), bindings);
    expect(await anyone.text()).toBe("my own write");
    expect(sessions.at(-1)).toBe("first-unconstrained");
  });

  it("a browser script may send the bookmark back and read it (CORS)", async () => {
    const app = createWorkerApp();
    const preflight = await app.fetch(
      new Request(`${API}/getData/x`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example",
          "access-control-request-method": "GET",
          "access-control-request-headers": "x-d1-bookmark",
        },
      }),
      env,
    );
    expect(preflight.status).toBe(204);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(",");
    expect(allowed).toContain("x-d1-bookmark");

    const listed = await app.fetch(
      new Request(`${API}/listResources?tenant=d1`, { headers: { origin: "https://app.example" } }),
      env,
    );
    expect(listed.status).toBe(200);
    expect(listed.headers.get("x-d1-bookmark")).toBeTruthy();
    const exposed = (listed.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(",");
    expect(exposed).toContain("x-d1-bookmark");
    expect(exposed).toContain("x-request-id"); // the app's own list is kept
  });

  it("a malformed bookmark is 400 naming the header, not a D1 error", async () => {
    const app = createWorkerApp();
    const res = await app.fetch(
      new Request(`${API}/listResources?tenant=d1`, { headers: { "x-d1-bookmark": "not a bookmark" } }),
      env,
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    const problem = (await res.json()) as { code: string; errors: { pointer: string }[] };
    expect(problem.code).toBe("VALIDATION_FAILED");
    expect(problem.errors[0]?.pointer).toBe("/header/x-d1-bookmark");
  });
});
