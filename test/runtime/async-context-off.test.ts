/**
 * Node (20, 22) keeps AsyncLocalStorage's promise hooks on for the life of the process once any
 * storage has been entered and not disabled: every later promise and async resource of every request
 * then pays an init hook and a context copy. Entered at start-up by hono/jsx's `toString()` for the
 * library page, that cost ≈ 20 % of a 4 KiB GET on the shipped bundle (issue 36, bench --compare).
 * So building the app and serving ordinary requests must leave them off; a request carrying a
 * `traceparent` is the one that turns them on (runtime/host/trace-scope.ts).
 */
import { executionAsyncId } from "node:async_hooks";
import { afterEach, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** With promise hooks on, each promise reaction runs under an async id of its own; off, they share the caller's. */
async function promiseHooksOn(): Promise<boolean> {
  const first = await Promise.resolve().then(() => executionAsyncId());
  const second = await Promise.resolve().then(() => executionAsyncId());
  return first !== second;
}

describe("the service leaves AsyncLocalStorage's promise hooks off", () => {
  it("after start-up (the library page rendered) and ordinary requests", async () => {
    expect(await promiseHooksOn(), "on before the app was built: this test cannot see anything").toBe(false);
    app = await startTestApp({}, { transport: "in-process" });
    expect(await promiseHooksOn(), "turned on while the app was built").toBe(false);
    const library = await app.fetch(app.url("/library"));
    expect(library.status).toBe(200);
    expect(await library.text()).toMatch(/^<!doctype html><html lang="en">/);
    expect((await app.fetch(app.url("/cms/v1.0/getData/01m8jj0a45s66s2wyma7mpmtpeb9gg-acme/a.txt"))).status).toBe(404);
    expect(await promiseHooksOn(), "turned on while serving").toBe(false);
  });
});
