/**
 * The Worker entry inside workerd: its SSRF policy, a bad setting answered with a 500 problem, and
 * blob collection on D1 + R2 (the migrations' triggers and the cron trigger's pass).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createWorkerApp } from "../../src/runtime/worker/server.js";
import { fakeClock } from "../helpers/fake-clock.js";

const create = (resourceExternalURI: string) =>
  new Request("http://worker.test/cms/v1.0/createResource", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      resourceAuthor: "a",
      resourceExternalURI,
      resourceMediaType: "text/plain",
      resourceName: "x.txt",
      resourceTenantId: "t",
    }),
  });

// Every start-up reads D1 (the deployment id its R2 bucket's owner marker is checked against).
beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));
afterEach(() => vi.restoreAllMocks());

describe("the Worker entry", () => {
  it.each([
    "http://127.0.0.1/x",
    "http://2130706433/x",
    "http://0x7f.0.0.1/x",
    "http://017700000001/x",
    "http://10.0.0.1/x",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/x",
    "http://[::ffff:127.0.0.1]/x",
    "http://localhost:8080/x",
    "http://api.localhost/x",
    "http://metadata.google.internal/x",
    "http://printer.local/x",
    "http://intranet/x",
    "https://user:pass@example.com/x",
    "file:///etc/passwd",
  ])("refuses %s with 422 ORIGIN_REFUSED before fetching", async (uri) => {
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    const res = await exports.default.fetch(create(uri));
    const body = (await res.json()) as { code: string; errors?: { pointer: string }[] };
    // file: fails schema validation (400); every other URI reaches the fetcher and is refused there.
    if (uri.startsWith("file:")) {
      expect(res.status).toBe(400);
    } else {
      expect(res.status).toBe(422);
      expect(body.code).toBe("ORIGIN_REFUSED");
      expect(body.errors?.map((e) => e.pointer)).toContain("/body/resourceExternalURI");
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it("answers every request with a 500 problem when a setting is bad, logging its name once and no value", async () => {
    const logged: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void logged.push(line));
    const app = createWorkerApp();
    const bad = { ...env, CMS_MAX_RESOURCE_BYTES: "-1", CMS_LINK_SECRET: "short-secret-value" };
    for (let i = 0; i < 2; i++) {
      const res = await app.fetch(new Request("http://worker.test/apiversion"), bad);
      expect(res.status).toBe(500);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(await res.json()).toMatchObject({ code: "INTERNAL", status: 500 });
    }
    const errors = logged
      .map((l) => JSON.parse(l) as { msg: string; settings?: string[] })
      .filter((l) => l.msg === "invalid configuration");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.settings?.sort()).toEqual(["CMS_LINK_SECRET", "CMS_MAX_RESOURCE_BYTES"]);
    expect(logged.join("\n")).not.toContain("short-secret-value");
  });

  it("sends the explorer with its CSP: own scripts only, never framed", async () => {
    const res = await exports.default.fetch(new Request("http://worker.test/swagger-ui.html"));
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain('<script src="/explorer.js"></script>');
  });

  it("answers /apiversion through the deployed entry", async () => {
    const res = await exports.default.fetch(new Request("http://worker.test/apiversion"));
    expect(await res.text()).toBe('{"minVersion":1.0,"maxVersion":1.0,"versionContexts":{"1.0":"/cms/v1.0"}}');
  });

  it("collects on D1 and R2: a purge deletes its blob; the cron's sweep and passes never delete a blob D1 has no record of; an upload expired on the app's clock goes", async () => {
    const time = fakeClock();
    const app = createWorkerApp({ clock: time.clock });
    const settings = { ...env, CMS_GC_GRACE_SECONDS: "1", CMS_TUS_EXPIRY_SECONDS: "1" };
    const body = {
      resourceAuthor: "a",
      resourceMediaType: "text/plain",
      resourceName: "gc.txt",
      resourceTenantId: "gc",
    };
    const created = await app.fetch(
      new Request("http://worker.test/cms/v1.0/createResource", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...body, resourceBinary: btoa("collect me on R2") }),
      }),
      settings,
    );
    expect(created.status).toBe(201);
    const { resourceUID } = (await created.json()) as { resourceUID: string };
    const keys = async () => (await env.BLOBS.list({ prefix: "t/" })).objects.map((o: { key: string }) => o.key);
    const [blobKey] = await keys();
    expect(blobKey).toBeDefined();

    const purged = await app.fetch(
      new Request("http://worker.test/cms/v1.0/purgeResource", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ resourceUID }),
      }),
      settings,
    );
    expect(await purged.json()).toMatchObject({ blobsRemoved: 1 });
    expect(await keys()).not.toContain(blobKey);

    // A blob no row and no ledger entry knows (another deployment's, or older data): the sweep
    // counts it, no pass ever deletes it.
    const stranger = `t/${"0".repeat(32)}/ab/cd/abcd${"0".repeat(60)}`;
    await env.BLOBS.put(stranger, "not ours");
    await app.collect(settings, { sweep: true });
    expect(await keys()).toContain(stranger);
    // An abandoned tus upload, to show the cron's pass runs on the app's clock: it expires there only.
    const tusParts = async () => (await env.BLOBS.list({ prefix: "tus/" })).objects.length;
    const upload = await app.fetch(
      new Request("http://worker.test/cms/v1.0/uploads", {
        method: "POST",
        headers: {
          "tus-resumable": "1.0.0",
          "upload-length": "10",
          "upload-metadata": `resourceTenantId ${btoa("gc")},filename ${btoa("u.bin")},author ${btoa("a")}`,
          "content-type": "application/offset+octet-stream",
        },
        body: "abc",
      }),
      settings,
    );
    expect(upload.status).toBe(201);
    expect(await tusParts()).toBe(1);
    time.advance(1100); // past the grace period and the upload's expiry, on the app's clock
    await app.collect(settings, { sweep: true });
    await app.collect(settings, { sweep: false });
    expect(await keys()).toContain(stranger);
    expect(await tusParts()).toBe(0);
    await env.BLOBS.delete(stranger);
  });
});
