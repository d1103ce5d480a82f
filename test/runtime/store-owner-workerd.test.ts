/**
 * Two Workers (two D1 databases) bound to one R2 bucket, each the bundle as deployed, run by
 * Miniflare on 127.0.0.1 with R2 and D1 on disk: the first claims the bucket and stores blobs; the
 * second answers every request, /readyz included, 503 STORE_OWNED_ELSEWHERE; the first, restarted,
 * still serves every blob. (The cron's part: test/workers/store-owner.test.ts.)
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTexts } from "../helpers/cms-client.js";
import { sharedWorkerBundle, startWorkerd, type WorkerBundle, type WorkerdServer } from "../helpers/workerd.js";

const bindings = { CMS_LINK_SECRET: "a-link-secret-of-at-least-32-characters!", CMS_LOG_LEVEL: "error" };

describe("two Workers with their own D1 databases on one R2 bucket", () => {
  let dir: string;
  let bundle: WorkerBundle;
  const start = (name: string) =>
    startWorkerd(bundle, { bindings, persistDir: join(dir, name), r2PersistDir: join(dir, "shared-r2") });
  const blobs: { uri: string; text: string }[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cms-two-workers-"));
    bundle = sharedWorkerBundle();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function expectAllServed(server: WorkerdServer) {
    for (const { uri, text } of blobs) {
      const res = await fetch(`${server.url}/cms/v1.0/getData/${uri}`);
      expect(res.status, uri).toBe(200);
      expect(await res.text()).toBe(text);
    }
  }

  it("the second refuses every request with 503 STORE_OWNED_ELSEWHERE; the first keeps its blobs", {
    timeout: 120_000,
  }, async () => {
    const first = await start("first");
    try {
      blobs.push(
        ...(await createTexts(
          first.url,
          "first",
          Array.from({ length: 3 }, (_, i) => `the first Worker's blob ${i}`),
        )),
      );
    } finally {
      await first.close();
    }

    const second = await start("second");
    try {
      for (const path of ["/readyz", "/apiversion", `/cms/v1.0/getData/${blobs[0]?.uri}`]) {
        const res = await fetch(`${second.url}${path}`);
        expect(res.status, path).toBe(503);
        expect(await res.json()).toMatchObject({ code: "STORE_OWNED_ELSEWHERE", status: 503 });
      }
    } finally {
      await second.close();
    }

    const again = await start("first");
    try {
      expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
      await expectAllServed(again);
    } finally {
      await again.close();
    }
  });
});
