/**
 * The Worker on D1 + R2 inside workerd: it claims an R2 bucket nobody owns for its D1 database, and
 * when the bucket belongs to another deployment (another database's id in its owner marker) it
 * answers every request, /readyz included, with 503 STORE_OWNED_ELSEWHERE, logs it once, and its
 * cron deletes nothing. The decisions behind it (the same claimBlobStore as Node's):
 * test/services/store-owner.test.ts.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";

const MARKER = ".cms-owner";
const stranger = `t/${"1".repeat(32)}/ab/cd/abcd${"1".repeat(60)}`;

async function emptyBucket() {
  const { objects } = await env.BLOBS.list();
  if (objects.length > 0) await env.BLOBS.delete(objects.map((o: { key: string }) => o.key));
}

beforeEach(async () => {
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
  await emptyBucket();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await emptyBucket();
});

describe("the Worker's blob store owner", () => {
  it("claims a bucket nobody owns for its D1 database, and serves", async () => {
    const res = await createWorkerApp().fetch(new Request("http://worker.test/readyz"), env);
    expect(res.status).toBe(200);
    const marker = (await (await env.BLOBS.get(MARKER))?.json()) as { deployment: string };
    const row = await env.DB.prepare("select id from deployment").first<{ id: string }>();
    expect(marker.deployment).toBe(row?.id);
  });

  it("answers 503 STORE_OWNED_ELSEWHERE to every request when another deployment owns the bucket, logs it once, collects nothing", async () => {
    await env.BLOBS.put(MARKER, `${JSON.stringify({ deployment: "another-deployment" })}\n`);
    await env.BLOBS.put(stranger, "the other deployment's blob");
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void logged.push(line));
    const app = createWorkerApp();
    for (const path of ["/readyz", "/apiversion", "/cms/v1.0/getData/x/y"]) {
      const res = await app.fetch(new Request(`http://worker.test${path}`), env);
      expect(res.status, path).toBe(503);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "STORE_OWNED_ELSEWHERE", status: 503 });
    }
    await app.collect({ ...env, CMS_GC_GRACE_SECONDS: "0" }, { sweep: true });
    expect(await env.BLOBS.head(stranger)).not.toBeNull();
    const refusals = logged
      .map((l) => JSON.parse(l) as { msg: string; error?: string })
      .filter((l) => l.msg === "cannot start");
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.error).toMatch(/^the R2 bucket bound as BLOBS belongs to another deployment .*BLOBS bucket/);
  });
});
