/** Resource endpoints: thin handlers that call the resource service. */
import { API_PREFIX } from "../meta.js";
import { createRouter } from "../router.js";
import { serveBlob } from "../../lib/serve-blob.js";
import type { ResourceRow } from "../../metadata/schema.js";
import type { ResourceService } from "../../services/resources.js";
import * as contract from "./contract.js";
import type { ResourceView } from "./schemas.js";

export const toResourceView = (row: ResourceRow): ResourceView => ({
  resourceUID: row.uid,
  author: row.author,
  resourceURI: `${row.uid}/${row.name}`,
  resourcesList: null,
  mediaType: row.mediaType,
  size: row.size,
  sha256: row.sha256,
  createdAt: new Date(row.createdAt).toISOString(),
});

export const dataPath = (row: ResourceRow) => `${API_PREFIX}/getData/${row.uid}/${encodeURIComponent(row.name)}`;

export function createResourceRouter(resources: ResourceService) {
  return createRouter()
    .openapi(contract.createResource, async (c) => {
      const row = await resources.register(c.req.valid("json"), { signal: c.req.raw.signal });
      return c.json(toResourceView(row), 201, { location: dataPath(row) });
    })
    .openapi(contract.getData, async (c) => {
      const { resourceUID, resourceName } = c.req.valid("param");
      const row = await resources.find(resourceUID, resourceName);
      const { entity, open } = resources.content(row);
      return (await serveBlob(c.req.raw, entity, open)) as never;
    });
}
