/** Resource endpoints: thin handlers that call the resource service, behind the auth guards. */
import type { Guards } from "../../auth/guards.js";
import type { LinkSigner } from "../../auth/signed-links.js";
import { serveBlob } from "../../lib/serve-blob.js";
import type { ResourceRow } from "../../metadata/schema.js";
import type { ResourceService } from "../../services/resources.js";
import { API_PREFIX } from "../meta.js";
import { createRouter } from "../router.js";
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

export const dataPath = (row: Pick<ResourceRow, "uid" | "name">) =>
  `${API_PREFIX}/getData/${row.uid}/${encodeURIComponent(row.name)}`;

/** `<uid>/<name>` → [uid, name]; the name may not contain `/`, so the first slash splits. */
const splitResourceUri = (uri: string) => {
  const slash = uri.indexOf("/");
  return slash < 0 ? [uri, ""] : [uri.slice(0, slash), uri.slice(slash + 1)];
};

export interface ResourceRouterDeps {
  resources: ResourceService;
  guards: Guards;
  links: LinkSigner;
  clock: () => Date;
  /** Origin for absolute URLs (signed links); the request's own origin when unset. */
  publicUrl?: string;
}

export function createResourceRouter({ resources, guards, links, clock, publicUrl }: ResourceRouterDeps) {
  const router = createRouter();
  router.use(`${API_PREFIX}/createResource`, ...guards.role("creator"));
  router.use(`${API_PREFIX}/createDataLink`, ...guards.role("consumer"));
  router.use(`${API_PREFIX}/getData/*`, ...guards.read);

  return router
    .openapi(contract.createResource, async (c) => {
      const row = await resources.register(c.req.valid("json"), { principal: c.get("principal"), signal: c.req.raw.signal });
      return c.json(toResourceView(row), 201, { location: dataPath(row) });
    })
    .openapi(contract.getData, async (c) => {
      const { resourceUID, resourceName } = c.req.valid("param");
      const row = await resources.find(resourceUID, resourceName, c.get("principal"));
      const { entity, open } = resources.content(row);
      return (await serveBlob(c.req.raw, entity, open)) as never;
    })
    .openapi(contract.createDataLink, async (c) => {
      const { resourceURI, expiresIn } = c.req.valid("json");
      const [uid = "", name = ""] = splitResourceUri(resourceURI);
      const row = await resources.find(uid, name, c.get("principal"));
      const expires = Math.floor(clock().getTime() / 1000) + expiresIn;
      const path = dataPath(row);
      const query = await links.sign(path, expires);
      const origin = publicUrl ?? new URL(c.req.url).origin;
      return c.json({ url: `${new URL(path, origin).href}?${query}`, expires: new Date(expires * 1000).toISOString() }, 200);
    });
}
