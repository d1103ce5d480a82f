/**
 * The server as shipped (`node dist/node/server.mjs`, and `bun src/bun.ts`) as a process of its own:
 * every log line carries the instance id, and Bun serves GET /metrics counting its fast path too.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API, createTexts } from "../helpers/cms-client.js";
import { parsePromText } from "../helpers/prom-text.js";
import { type ServerProcess, spawnServer } from "../helpers/spawn-server.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cms-instance-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const envIn = (name: string, extra: Record<string, string> = {}) => ({
  CMS_VOLUME: join(dir, name, "volume"),
  CMS_DATABASE_URL: `file:${join(dir, `${name}.db`)}`,
  ...extra,
});

const records = (server: ServerProcess) => server.stdout.map((line) => JSON.parse(line) as Record<string, unknown>);

describe("instance id", () => {
  it("is on every log line: CMS_INSTANCE_ID, or host name and process id", async () => {
    const named = await spawnServer(envIn("named", { CMS_INSTANCE_ID: "cms-a.1" }));
    const unnamed = await spawnServer(envIn("unnamed"));
    try {
      await (await fetch(`${named.url}/healthz`)).text();
      await (await fetch(`${named.url}/no/such`)).text();
      await (await fetch(`${unnamed.url}/healthz`)).text();
      // The access-log lines (written in batches, after the answer): awaited as they come.
      const requestLine = (server: ServerProcess, path: string) =>
        server.waitForLine((l) => l.msg === "request" && l.path === path);
      await Promise.all([
        requestLine(named, "/healthz"),
        requestLine(named, "/no/such"),
        requestLine(unnamed, "/healthz"),
      ]);
    } finally {
      await named.stop();
      await unnamed.stop();
    }
    const namedLines = records(named);
    expect(namedLines.filter((l) => l.msg === "request").length).toBeGreaterThanOrEqual(2);
    for (const line of namedLines) expect(line.instance).toBe("cms-a.1");
    const unnamedLines = records(unnamed);
    expect(unnamedLines.length).toBeGreaterThan(1);
    for (const line of unnamedLines) expect(line.instance).toBe(`${hostname()}:${unnamed.child.pid}`);
  });
});

describe("Bun", () => {
  it("serves GET /metrics and counts getData answered by its fast path", async () => {
    const bun = await spawnServer(envIn("bun", { CMS_METRICS_ENABLED: "true", CMS_INSTANCE_ID: "bun-1" }), "bun");
    try {
      const [created] = await createTexts(bun.url, "bunny", ["bun bytes"]);
      for (let i = 0; i < 3; i++)
        expect(await (await fetch(`${bun.url}${API}/getData/${created?.uri}`)).text()).toBe("bun bytes");
      const res = await fetch(`${bun.url}/metrics`);
      expect(res.status).toBe(200);
      const s = parsePromText(await res.text());
      const route = { method: "GET", route: "/cms/v1.0/getData/:context/:path", status: "200" };
      expect(s.value("cms_http_requests_total", route)).toBe(3);
      expect(s.value("cms_http_sent_bytes_total", { route: route.route })).toBe(3 * "bun bytes".length);
      expect(s.value("cms_ingests_total")).toBe(1);
      expect(s.find("cms_instance_info", { id: "bun-1" })).toHaveLength(1);
      expect(s.find("process_cpu_user_seconds_total")).toHaveLength(1);
      expect((await bun.waitForLine((l) => l.msg === "request")).instance).toBe("bun-1");
    } finally {
      await bun.stop();
    }
  });
});
