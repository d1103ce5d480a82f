/**
 * `cms update <UID> <file>` as a user runs it, against the real server on 127.0.0.1 with a small
 * CMS_MAX_INLINE_BYTES: a new version larger than updateResource's inline limit is sent through the
 * resumable upload, in several PATCHes, and the resource is unlocked afterwards.
 */
import { createHash, randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { runCms } from "./run-cms.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const INLINE = 64 * 1024;

let app: TestApp;
let env: Record<string, string>;
const cms = (...args: string[]) => runCms(args, env, app.dir);

beforeAll(async () => {
  app = await startTestApp({ CMS_LOG_LEVEL: "warn", CMS_MAX_INLINE_BYTES: String(INLINE) });
  env = { CMS_URL: app.baseUrl, XDG_CONFIG_HOME: join(app.dir, "config") };
});
afterAll(async () => app?.close());

describe("cms update", () => {
  it("replaces a resource's content with a file of any size (here 20 MiB, inline limit 64 KiB), then unlocks", async () => {
    await writeFile(join(app.dir, "v1.bin"), "version one");
    const put = await cms("put", "v1.bin", "--tenant", "upd", "--json");
    expect(put.code, put.stderr).toBe(0);
    const { resourceUID, resourceURI } = JSON.parse(put.stdout) as { resourceUID: string; resourceURI: string };

    const bytes = randomBytes(20 * 1024 * 1024 + 7); // more than one PATCH (16 MiB each)
    await writeFile(join(app.dir, "v2.bin"), bytes);
    const updated = await cms("update", resourceUID, "v2.bin", "--json");
    expect(updated.stderr).toBe("");
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({
      resourceUID,
      resourceURI,
      size: bytes.length,
      sha256: sha256(bytes),
    });

    const served = await fetch(`${app.baseUrl}/cms/v1.0/getData/${resourceURI}`);
    expect(sha256(new Uint8Array(await served.arrayBuffer()))).toBe(sha256(bytes));
    // Unlocked: a second update takes the lock again.
    await writeFile(join(app.dir, "v3.bin"), "three");
    const again = await cms("update", resourceUID, "v3.bin", "--json");
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ size: 5 });
  }, 120_000);

  it("an unknown resource: exit 1 and one line naming it", async () => {
    await writeFile(join(app.dir, "x.bin"), "x");
    const result = await cms("update", "0000000000aaaaaaaaaaaaaaaaaaaa-upd", "x.bin");
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});
