/**
 * Guards are bound to the routes themselves (routes/router.ts `guarded`), not to path strings beside
 * them. Checked from the outside, over the whole OpenAPI document: every operation that declares
 * bearer security refuses a request without a token (401, before its body or parameters are
 * validated), and every operation that declares none answers without one. A route added without
 * its guard, or a guard left on a path that no longer matches its route, fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, startAuthStack } from "../helpers/auth-stack.js";

interface Operation {
  security?: Record<string, string[]>[];
  operationId?: string;
}
let stack: AuthStack;
let operations: { method: string; path: string; op: Operation }[] = [];

beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  const doc = (await (await stack.app.fetch(stack.app.url("/openapi.json"))).json()) as {
    paths: Record<string, Record<string, Operation>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
});
afterAll(() => stack.close());

/** A concrete URL for a templated path: every `{param}` gets a plausible value. */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, (m) => (m === "{revision}" ? "1" : "x"));

describe("guards bound to routes, seen through the OpenAPI document", () => {
  it("the document lists both protected and open operations", () => {
    expect(operations.filter((o) => o.op.security?.length).length).toBeGreaterThan(15);
    expect(operations.filter((o) => !o.op.security?.length).map((o) => o.path)).toEqual(
      expect.arrayContaining(["/healthz", "/readyz"]),
    );
  });

  it("every operation declaring bearer security answers 401 without a token, before validating anything", async () => {
    const answers: string[] = [];
    for (const { method, path } of operations.filter((o) => o.op.security?.length)) {
      if (method === "OPTIONS") continue; // tus capability discovery is open by protocol
      const headers: Record<string, string> = { "content-type": "application/json", "tus-resumable": "1.0.0" };
      const res = await stack.app.fetch(stack.app.url(concrete(path)), {
        method,
        headers,
        body: method === "GET" || method === "HEAD" ? undefined : "{",
      });
      await res.body?.cancel();
      answers.push(`${method} ${path} → ${res.status}`);
    }
    expect(answers.length).toBeGreaterThan(15);
    expect(answers.filter((a) => !a.endsWith("→ 401"))).toEqual([]);
  });

  it("every operation declaring no security answers without a token", async () => {
    for (const { method, path } of operations.filter(
      (o) => !o.op.security?.length && ["GET", "HEAD"].includes(o.method),
    )) {
      const res = await stack.app.fetch(stack.app.url(concrete(path)), { method });
      await res.body?.cancel();
      expect([path, res.status]).not.toEqual([path, 401]);
      expect(res.status).not.toBe(403);
    }
  });
});
