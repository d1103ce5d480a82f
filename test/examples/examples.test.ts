/**
 * examples/ cannot rot: each is run here against the real server on 127.0.0.1 — the curl
 * walkthrough with bash and curl, the Node script with node (through the package's "./client"
 * export, built first). The video page runs in Chromium: video-page.test.ts, in the heavy lane.
 */
import { execFile } from "node:child_process";
import { readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- a plain .mjs script without types
import { buildClient } from "../../scripts/build.mjs";
import { startAuthStack } from "../helpers/auth-stack.js";
import { type Origin, startOrigin } from "../helpers/origin.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";

const run = promisify(execFile);
const EXAMPLES = fileURLToPath(new URL("../../examples/", import.meta.url));

let app: TestApp;
let origin: Origin;
beforeAll(async () => {
  [app, origin] = await Promise.all([startTestApp({ CMS_LOG_LEVEL: "warn" }, { ownPublicUrl: true }), startOrigin()]);
});
afterAll(async () => {
  await Promise.all([app?.close(), origin?.close()]);
});

describe("examples/", () => {
  it("curl-walkthrough.sh runs the seed's requests end to end", async () => {
    const uri = origin.put("walk.txt", "hello from the walkthrough");
    const { stdout } = await run("bash", [join(EXAMPLES, "curl-walkthrough.sh"), uri], {
      cwd: app.dir,
      env: { PATH: process.env.PATH ?? "", CMS_URL: app.baseUrl },
    });
    expect(stdout).toContain('{"minVersion":1.0,"maxVersion":1.0,"versionContexts":{"1.0":"/cms/v1.0"}}');
    expect(stdout).toMatch(/content-range: bytes 0-4\/26/i);
    expect(stdout).toContain("status 304");
    expect(stdout).toContain("signed link: status 200");
    expect(stdout).toContain("deleted: status 200");
    expect(stdout).toContain("after delete: status 404");
    expect(await readFile(join(app.dir, "walkthrough.txt"), "utf8")).toBe("hello from the walkthrough");
  });

  // The same script under Bun (the pinned devDependency) shows the client is runtime-neutral.
  it.each([
    ["node", process.execPath],
    ["bun", join(EXAMPLES, "../node_modules/.bin/bun")],
  ])(
    "node-client.mjs under %s uploads, lists, downloads verified and links through content-resource-service/client",
    async (runtime, exe) => {
      await buildClient();
      const file = join(app.dir, `example-${runtime}.txt`);
      await writeFile(file, "typed client example");
      const { stdout } = await run(exe, [join(EXAMPLES, "node-client.mjs"), file], {
        cwd: app.dir,
        env: { PATH: process.env.PATH ?? "", CMS_URL: app.baseUrl },
      });
      expect(stdout).toMatch(new RegExp(`^created \\S+/example-${runtime}\\.txt [0-9a-f]{64}$`, "m"));
      expect(stdout).toContain("listed 1 resource(s)");
      expect(stdout).toContain("downloaded and verified 20 bytes");
      expect(stdout).toMatch(/signed link http:\/\/127\.0\.0\.1:\d+\/cms\/v1\.0\/getData\/.*signature=/);
      expect(await readFile(`${file}.downloaded`, "utf8")).toBe("typed client example");
    },
  );

  it("node-client.mjs prints a refused 100 MB upload as one line with the status and code, no stack", async () => {
    await buildClient();
    const stack = await startAuthStack({ CMS_LOG_LEVEL: "warn" });
    try {
      // 100 MB, sparse: a body the server refuses (no token) long before it could all be sent.
      const file = join(stack.app.dir, "big.bin");
      await writeFile(file, "");
      await truncate(file, 100 * 1024 * 1024);
      const failed = await run(process.execPath, [join(EXAMPLES, "node-client.mjs"), file, "acme"], {
        cwd: stack.app.dir,
        env: { PATH: process.env.PATH ?? "", CMS_URL: stack.app.baseUrl },
      }).then(
        () => ({ code: 0, stderr: "" }),
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed.code).toBe(1);
      const lines = failed.stderr.split(/[\r\n]+/).filter(Boolean);
      expect(lines.at(-1)).toMatch(/^node-client: 401 UNAUTHENTICATED: /);
      expect(failed.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await stack.close();
    }
  });
});
