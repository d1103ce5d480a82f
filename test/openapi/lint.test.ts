/**
 * The served OpenAPI document judged by two common tools, run as a user would (child processes,
 * the checked-in redocly.yaml and .spectral.yaml): 0 errors, 0 warnings. Plus what generated
 * clients rely on: operationIds equal to the anchor's verbs, getData's headers, HEAD operations.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const bin = (name: string) => join(ROOT, "node_modules/.bin", name);

type Operation = {
  operationId?: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
  security?: unknown[];
};
type Document = {
  servers?: { url: string }[];
  tags?: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
};

let app: TestApp;
let doc: Document;
let file: string;
beforeAll(async () => {
  app = await startTestApp({ CMS_LOG_LEVEL: "warn" });
  const text = await (await fetch(app.url("/openapi.json"))).text();
  doc = JSON.parse(text) as Document;
  file = join(app.dir, "openapi.json");
  await writeFile(file, text);
});
afterAll(() => app.close());

/** Runs a linter; both exit non-zero when they find problems, so the output is read either way. */
async function lint(cmd: string, args: string[]): Promise<string> {
  const env = { ...process.env, NO_COLOR: "1", REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
  try {
    return (await run(cmd, args, { cwd: ROOT, env })).stdout;
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? String(err);
  }
}

// The two linters are processes of their own (most of this file's time): they run at once. Each
// loads a few thousand modules (about 1.5 s of CPU); at load average 15 spectral alone took 30 s.
describe.concurrent("the OpenAPI document", { timeout: 90_000 }, () => {
  it("passes redocly lint (recommended rules, redocly.yaml) with 0 errors and 0 warnings", async () => {
    const out = await lint(bin("redocly"), ["lint", file, "--config", join(ROOT, "redocly.yaml"), "--format", "json"]);
    const report = JSON.parse(out) as {
      totals: Record<string, number>;
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("passes spectral lint (spectral:oas, .spectral.yaml) with 0 problems", async () => {
    const out = await lint(bin("spectral"), [
      "lint",
      file,
      "--ruleset",
      join(ROOT, ".spectral.yaml"),
      "--fail-severity",
      "hint",
    ]);
    expect(out).toContain("No results with a severity of 'hint' or higher found!");
  });

  it("names each operation after the anchor's verb", () => {
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids).not.toContain(undefined);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of [
      "createResource",
      "uploadResource",
      "queryResource",
      "listResources",
      "getData",
      "getDataHead",
      "updateResource",
      "deleteResource",
      "lockResourceDTO",
      "unlockResourceDTO",
      "renewResourceDtoLock",
      "lockResource",
      "queryResourceLock",
      "createDataLink",
    ]) {
      expect(ids).toContain(id);
    }
  });

  it("documents getData's request and response headers, its signed-link parameters and HEAD", () => {
    const path = doc.paths["/cms/v1.0/getData/{context}/{path}"]!;
    const names = (path.get!.parameters ?? []).map((p) => `${p.in}:${p.name}`);
    for (const h of ["Range", "If-None-Match", "If-Modified-Since", "If-Range", "If-Match", "If-Unmodified-Since"])
      expect(names).toContain(`header:${h}`);
    expect(names).toEqual(expect.arrayContaining(["query:expires", "query:signature"]));
    expect(Object.keys(path.get!.responses["206"]!.headers ?? {})).toEqual(
      expect.arrayContaining(["ETag", "Last-Modified", "Accept-Ranges", "Content-Range", "Content-Disposition"]),
    );
    expect(path.head?.operationId).toBe("getDataHead");
  });

  it("has servers, global tags, open health checks and 405/500 everywhere; 423 says Retry-After", () => {
    // No CMS_PUBLIC_URL here: the server is "/" (resolved against the document's URL), never the request's Host.
    expect(doc.servers?.[0]?.url).toBe("/");
    expect(doc.tags?.map((t) => t.name)).toEqual(
      expect.arrayContaining(["meta", "resources", "content", "lifecycle", "locks"]),
    );
    expect(doc.paths["/healthz"]!.get!.security).toEqual([]);
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops))
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["405", "500"]));
    expect(Object.keys(doc.paths["/cms/v1.0/lockResourceDTO"]!.post!.responses["423"]!.headers ?? {})).toContain(
      "Retry-After",
    );
  });
});
