/**
 * Per-tenant quotas across instances: two server processes (the bundle as shipped) sharing one
 * database never go over a limit together. The rest of the quota rules: test/routes/quotas.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API } from "../helpers/cms-client.js";
import { spawnServer } from "../helpers/spawn-server.js";

/** The tenant's usage document from the server at `base`. */
async function usage(base: string, tenant: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${API}/usage?resourceTenantId=${tenant}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe("quotas across instances", () => {
  it("two server processes sharing one database never go over a limit together", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cms-quota-"));
    const env = {
      CMS_VOLUME: join(dir, "volume"),
      CMS_DATABASE_URL: `file:${join(dir, "cms.db")}`,
      CMS_QUOTA_RESOURCES: "7",
    };
    const a = await spawnServer(env);
    const b = await spawnServer(env);
    try {
      const create = (base: string, i: number) =>
        fetch(`${base}${API}/createResource`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            resourceAuthor: "A",
            resourceMediaType: "text/plain",
            resourceName: `m${i}.txt`,
            resourceTenantId: "multi",
            resourceBinary: btoa(`n${i}`),
          }),
        });
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => create(i % 2 ? a.url : b.url, i)));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(7);
      expect(answers.filter((r) => r.status === 507)).toHaveLength(23);
      expect(await usage(a.url, "multi")).toMatchObject({ resources: 7, limits: { resources: 7 } });
      expect(await usage(b.url, "multi")).toMatchObject({ resources: 7 });
    } finally {
      await a.stop();
      await b.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
