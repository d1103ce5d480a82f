/**
 * A client generated from the served document by common tools (openapi-typescript + openapi-fetch,
 * pinned in tools/openapi-gen, installed on first use): it type-checks with TypeScript 5 and runs
 * the seed flow against the real server. The types checked in for src/client must be exactly what
 * the served document generates, so the typed client cannot drift from the routes.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs script without types
import { generateTypes, TOOL, toolBin } from "../../scripts/openapi-types.mjs";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GENERATED = join(TOOL as string, "generated/openapi.d.ts");

let app: TestApp;
let origin: Origin;
beforeAll(async () => {
  [app, origin] = await Promise.all([startTestApp({ CMS_LOG_LEVEL: "warn" }), startOrigin()]);
  await mkdir(join(TOOL as string, "generated"), { recursive: true });
  await (generateTypes as (source: string, out: string) => Promise<void>)(app.url("/openapi.json"), GENERATED);
}, 180_000);
afterAll(async () => {
  await Promise.all([app?.close(), origin?.close()]);
});

describe("a client generated from /openapi.json", () => {
  it("is what src/client/openapi.d.ts holds (regenerate with scripts/openapi-types.mjs)", async () => {
    expect(await readFile(GENERATED, "utf8")).toBe(await readFile(join(ROOT, "src/client/openapi.d.ts"), "utf8"));
  });

  it("type-checks with TypeScript 5 and runs the seed flow: create, query, getData with Range and If-None-Match", async () => {
    await run((toolBin as (n: string) => string)("tsc"), ["-p", join(TOOL as string, "tsconfig.json")]);
    const text = "hello, generated client";
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", join(TOOL as string, "seed-flow.ts"), app.baseUrl, origin.put("seed.txt", text), text],
      { cwd: ROOT },
    );
    expect(JSON.parse(stdout)).toMatchObject({ range: "hell", notModified: 304 });
    expect(app.unhandledErrors()).toEqual([]);
  }, 60_000);
});
