/**
 * Body limits are bound to the routes themselves (routes/router.ts `bounded`), as guards are, not
 * kept in a map of path strings beside them. Seen from the outside: a route's guard runs before its
 * body is read, so a caller without a token is answered 401 whatever it sends; a caller with one
 * gets the route's own limit (64 KiB for JSON bodies, the inline allowance for create/update); and a
 * path no route serves is answered 404 without any limit applied to it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AuthStack, bearer, startAuthStack } from "../helpers/auth-stack.js";

let stack: AuthStack;
let token: string;

beforeAll(async () => {
  stack = await startAuthStack({}, { transport: "in-process" });
  token = await stack.passwordToken("acme-creator");
});
afterAll(() => stack.close());

/** A JSON body of `bytes` bytes, well-formed, so only its size can refuse it. */
const bigJson = (bytes: number) => JSON.stringify({ pad: "x".repeat(bytes - 10) });
const post = (verb: string, body: string, headers: Record<string, string> = {}) =>
  stack.app.fetch(stack.app.url(`/cms/v1.0/${verb}`), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });

describe("body limits bound to routes", () => {
  it.each(["queryResource", "lockResourceDTO", "createResource", "updateResource"])(
    "%s: without a token, an oversized body is 401, not 413",
    async (verb) => {
      const res = await post(verb, bigJson(8 * 1024 * 1024));
      await res.body?.cancel();
      expect(res.status).toBe(401);
    },
  );

  it("a JSON route keeps its 64 KiB limit, answered as before", async () => {
    const res = await post("queryResource", bigJson(65 * 1024), bearer(token));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      status: 413,
      detail: "JSON request bodies are limited to 65536 bytes",
    });
  });

  it("createResource keeps its inline allowance, answered as before", async () => {
    const res = await post("createResource", bigJson(6 * 1024 * 1024), bearer(token));
    expect(res.status).toBe(413);
    const limit = Math.ceil((4 * 1024 * 1024) / 3) * 4 + 64 * 1024;
    expect(await res.json()).toMatchObject({
      code: "PAYLOAD_TOO_LARGE",
      detail: `createResource bodies are limited to ${limit} bytes`,
    });
  });

  it("a path no route serves is 404 whatever its body's size", async () => {
    const res = await post("noSuchVerb", bigJson(1024 * 1024), bearer(token));
    expect(res.status).toBe(404);
  });
});
