/**
 * Issue 38's commands as a user runs them (a child process of bin/cms.mjs against the real server on
 * 127.0.0.1): describe, tag +a -b, mv, search; and a bad folder refused in one line, exit code 1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cmsClient } from "../helpers/cms-client.js";
import { startTestApp, type TestApp } from "../helpers/test-app.js";
import { join } from "node:path";
import { runCms } from "./run-cms.js";
import { retagged } from "../../src/cli/commands/describe.js";

let app: TestApp;
let env: Record<string, string>;
const cms = (...args: string[]) => runCms(args, env, app.dir);

beforeAll(async () => {
  app = await startTestApp({ CMS_LOG_LEVEL: "warn" });
  env = { CMS_URL: app.baseUrl, XDG_CONFIG_HOME: join(app.dir, "config") };
});
afterAll(() => app.close());

describe("cms describe, tag, mv, search", () => {
  it("describes, tags, moves and finds a resource", async () => {
    const created = await cmsClient(app, "cli").create({ resourceName: "boat.txt", tags: ["Old", "keep"] });
    const uid = created.resourceUID;
    const described = await cms(
      "describe",
      uid,
      "--title",
      "Fishing boat",
      "--alt",
      "A red boat",
      "--meta",
      "rating=5",
    );
    expect(described.stderr).toBe("");
    expect(described.code).toBe(0);
    const tagged = await cms("--json", "tag", uid, "+harbour", "-old");
    expect(tagged.code, tagged.stderr).toBe(0);
    expect(JSON.parse(tagged.stdout)).toMatchObject({
      tags: ["keep", "harbour"],
      title: "Fishing boat",
      metadata: { rating: 5 },
    });
    expect((await cms("mv", uid, "/boats/")).code).toBe(0);
    const found = await cms(
      "--json",
      "search",
      "fishing",
      "--tenant",
      "cli",
      "--folder",
      "/boats/",
      "--tag",
      "HARBOUR",
    );
    expect(found.code, found.stderr).toBe(0);
    expect((JSON.parse(found.stdout) as { items: { resourceUID: string }[] }).items.map((r) => r.resourceUID)).toEqual([
      uid,
    ]);
    const human = await cms("search", "boat*", "--tenant", "cli");
    expect(human.stdout).toContain(uid);
    const bad = await cms("mv", uid, "boats");
    expect(bad.code).toBe(1);
    expect(bad.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/folder/);
  }, 90_000); // six CLI processes one after another: 30 s was too short at a load average of 20
});

describe("retagged", () => {
  it("adds and removes case-insensitively, refusing a change without + or -", () => {
    expect(retagged(["A", "b"], ["-a", "+c", "+B"])).toEqual(["c", "B"]);
    expect(() => retagged([], ["c"])).toThrow(/\+tag/);
  });
});
