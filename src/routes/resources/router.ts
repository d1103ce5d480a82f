/** Resource endpoints: thin handlers that call the resource service, behind the auth guards. */
import type { Guards } from "../../auth/guards.js";
import { type LinkSigner, signedTarget } from "../../auth/signed-links.js";
import { ProblemError } from "../../problems.js";
import type { ContentSource } from "../../services/content-source.js";
import { toContentSource } from "../../services/content-source.js";
import { parseUri } from "../../services/resource-ids.js";
import type { ResourceService } from "../../services/resources.js";
import { type RevisionService, splitVersion } from "../../services/revisions.js";
import { inlineBody } from "../../http/middleware/body-limit.js";
import { createRouter, guarded } from "../router.js";
import * as contract from "./contract.js";
import { encodeCursor, listedTenant } from "./schemas.js";
import { dataPath } from "../../api-paths.js";
import { toResourceItem, toResourceView } from "./views.js";

export interface ResourceRouterDeps {
  resources: ResourceService;
  revisions: RevisionService;
  guards: Guards;
  links: LinkSigner;
  clock: () => Date;
  /** Origin for absolute URLs (signed links); unset = no links (never the request's Host). */
  publicUrl?: string;
  /** CMS_MAX_INLINE_BYTES: largest decoded resourceBinary. */
  maxInlineBytes: number;
}

export function createResourceRouter({
  resources,
  revisions,
  guards,
  links,
  clock,
  publicUrl,
  maxInlineBytes,
}: ResourceRouterDeps) {
  const router = createRouter();
  const creator = guards.role("creator");
  const consumer = guards.role("consumer");
  return router
    .openapi(
      guarded(contract.createResource, creator, [inlineBody(maxInlineBytes, "createResource bodies")]),
      async (c) => {
        const body = c.req.valid("json");
        // The schema guarantees exactly one of resourceBinary and resourceExternalURI.
        const source = toContentSource(body, maxInlineBytes) as ContentSource;
        const created = await resources.create(body, source, {
          principal: c.get("principal"),
          signal: c.req.raw.signal,
        });
        return c.json(toResourceView(created.primary, created.files), 201, { location: dataPath(created.primary) });
      },
    )
    .openapi(guarded(contract.queryResource, consumer), async (c) => {
      const { row, files } = await resources.query(c.req.valid("json").queryUID, c.get("principal"));
      return c.json(toResourceView(row, files), 200);
    })
    .openapi(guarded(contract.listResources, consumer), async (c) => {
      const q = c.req.valid("query");
      const rows = await resources.list(
        {
          tenantId: listedTenant(q),
          author: q.author,
          mediaType: q.mediaType,
          namePrefix: q.namePrefix,
          parentUid: q.parentUID,
          createdFrom: q.createdFrom,
          createdBefore: q.createdBefore,
          after: q.cursor,
          newestFirst: q.order === "desc",
          limit: q.limit + 1,
        },
        c.get("principal"),
      );
      const page = rows.slice(0, q.limit);
      const last = page.at(-1);
      return c.json(
        { resources: page.map(toResourceItem), nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null },
        200,
      );
    })
    .openapi(guarded(contract.createDataLink, consumer), async (c) => {
      // The Host header is the caller's to choose: a link built on it would send a third party's
      // browser, with a valid signature, wherever the caller liked.
      if (!publicUrl)
        throw new ProblemError(
          "UNAVAILABLE",
          "createDataLink needs CMS_PUBLIC_URL, the origin signed links are built on",
        );
      const { resourceURI, expiresIn } = c.req.valid("json");
      // A versionedURI (`…?v=<hex>`) gets a link to that version, which must be one of the resource's.
      const { uri: plainUri, version } = splitVersion(resourceURI);
      const uri = parseUri(plainUri);
      const row = await resources.findByUri(uri?.context ?? "", uri?.path ?? "", c.get("principal"));
      if (version) await revisions.byVersion(row, version);
      const expires = Math.floor(clock().getTime() / 1000) + expiresIn;
      const path = signedTarget(dataPath(row), version || undefined);
      const query = await links.sign(path, expires);
      return c.json(
        {
          url: `${new URL(path, publicUrl).href}${version ? "&" : "?"}${query}`,
          expires: new Date(expires * 1000).toISOString(),
        },
        200,
      );
    });
}
