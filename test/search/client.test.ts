/** The typed client's issue 38 methods against the real app (in-process): search, folders, metadata updates. */
import { describe, expect, it } from "vitest";
import { CmsProblem, createCmsClient } from "../../src/client/index.js";
import { useCmsApp } from "../helpers/cms-client.js";

const t = useCmsApp("typed", {}, { transport: "in-process" });

describe("typed client: describe and find", () => {
  it("updates a description with If-Match, then finds it by text and folder", async () => {
    const client = createCmsClient({
      baseUrl: t.app.baseUrl,
      fetch: (async (request: Request) =>
        t.app.fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body ? await request.text() : undefined,
        })) as typeof fetch,
    });
    const created = await t.cms.create({ title: "Lighthouse" });
    const resource = await client.queryResource(created.resourceUID);
    const updated = await client.updateResourceMetadata(
      created.resourceUID,
      { folder: "/coast/", tags: ["Beacon"] },
      { ifMatch: resource.metadataVersion },
    );
    expect(updated).toMatchObject({ folder: "/coast/", tags: ["Beacon"], title: "Lighthouse" });
    await expect(
      client.updateResourceMetadata(created.resourceUID, { title: "x" }, { ifMatch: resource.metadataVersion }),
    ).rejects.toBeInstanceOf(CmsProblem);
    const page = await client.searchResources({ tenant: "typed", q: "lighthouse", folder: "/coast/" });
    expect(page.items.map((r) => r.resourceUID)).toEqual([created.resourceUID]);
    expect(await client.folders("typed")).toEqual({ folders: [{ path: "/coast/", resources: 1, folders: 0 }] });
  });
});
