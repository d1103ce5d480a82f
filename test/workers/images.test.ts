/**
 * Image parameters on the Worker (issue 30) inside workerd: no Images binding is bound here, so a
 * transform request is 501 TRANSFORM_UNAVAILABLE and plain getData of the same content is unchanged.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";

beforeEach(() => applyD1Migrations(env.DB, env.TEST_MIGRATIONS));

describe("image parameters on Workers without an Images binding", () => {
  it("answer 501 TRANSFORM_UNAVAILABLE; plain getData is unchanged", async () => {
    // A 1×1 PNG: the content is an image, so only the missing transformer refuses.
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
    const created = await exports.default.fetch(
      new Request("http://worker.test/cms/v1.0/createResource", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          resourceAuthor: "a",
          resourceBinary: png,
          resourceMediaType: "image/png",
          resourceName: "dot.png",
          resourceTenantId: "t",
        }),
      }),
    );
    expect(created.status).toBe(201);
    const { resourceURI } = (await created.json()) as { resourceURI: string };
    const refused = await exports.default.fetch(
      new Request(`http://worker.test/cms/v1.0/getData/${resourceURI}?width=10`),
    );
    expect(refused.status).toBe(501);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(((await refused.json()) as { code: string }).code).toBe("TRANSFORM_UNAVAILABLE");
    const plain = await exports.default.fetch(new Request(`http://worker.test/cms/v1.0/getData/${resourceURI}`));
    expect(plain.status).toBe(200);
    expect(new Uint8Array(await plain.arrayBuffer()).length).toBe(atob(png).length);
  });
});
