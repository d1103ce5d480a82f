/** Update, delete, purge and revision endpoints: thin handlers over the lifecycle and revision services. */
import type { Context } from "hono";
import type { Guards } from "../../auth/guards.js";
import type { AppEnv } from "../../http/app-env.js";
import { answerCacheHeaders } from "../../http/cache-policy.js";
import { type CachedContent, markStale } from "../../delivery/stale-paths.js";
import { webContentSender } from "../../delivery/web.js";
import type { ContentService } from "../../services/content.js";
import type { RevisionRow } from "../../metadata/schema.js";
import { toContentSource } from "../../services/content-source.js";
import type { LifecycleService } from "../../services/lifecycle.js";
import { toUri } from "../../services/resource-ids.js";
import { type RevisionService, versionedUri } from "../../services/revisions.js";
import { API_PREFIX } from "../meta.js";
import { dimensionsOf, toResourceView } from "../resources/views.js";
import { inlineBody } from "../../http/middleware/body-limit.js";
import { createRouter, guarded, requestHost, type RouteGroup } from "../router.js";
import * as contract from "./contract.js";
import { ownerFieldOf } from "./schemas.js";

export interface LifecycleRouterDeps {
  lifecycle: LifecycleService;
  revisions: RevisionService;
  content: ContentService;
  guards: Guards;
  maxInlineBytes: number;
  /** A cache in front (the Worker's): told what an update, delete or purge made stale (delivery/stale-paths.ts). */
  cachedContent?: CachedContent;
}

const toRevisionView = (row: RevisionRow) => ({
  revision: row.revision,
  action: row.action,
  resourceName: row.name,
  author: row.author,
  mediaType: row.mediaType,
  size: row.size,
  sha256: row.sha256,
  createdAt: new Date(row.createdAt).toISOString(),
  dataURI: `${API_PREFIX}/getRevisionData/${row.resourceUid}/${row.revision}`,
});

/** Tells the cache in front (through the request's execution context: the Worker's) what this change made stale. */
function staleAfter(c: Context<AppEnv>, paths: string[]): void {
  let execution: object;
  try {
    execution = c.executionCtx;
  } catch {
    return; // no execution context: no Worker, no colo cache in front
  }
  markStale(execution, paths);
}

export function createLifecycleRouter({
  lifecycle,
  revisions,
  content,
  guards,
  maxInlineBytes,
  cachedContent,
}: LifecycleRouterDeps): RouteGroup {
  const router = createRouter();
  const { send } = webContentSender(content);
  const creator = guards.role("creator");

  return router
    .openapi(
      guarded(contract.updateResource, creator, [inlineBody(maxInlineBytes, "updateResource bodies")]),
      async (c) => {
        const body = c.req.valid("json");
        // The schema requires one of the two: resourceAuthor alone names the lock's owner too.
        const owner = (body.author ?? body.resourceAuthor) as string;
        const claim = { name: body.resourceUID, owner, lockId: body.lockID, ownerField: ownerFieldOf(body) };
        const update = {
          author: body.resourceAuthor,
          name: body.resourceName,
          mediaType: body.resourceMediaType,
          source: toContentSource(body, maxInlineBytes),
        };
        const { row, lock } = await lifecycle.update(claim, update, {
          principal: c.get("principal"),
          signal: c.req.raw.signal,
        });
        // Its versioned URLs still name the same bytes: only the mutable ones are stale.
        if (cachedContent) staleAfter(c, cachedContent.updated(row));
        return c.json(
          {
            resourceUID: row.uid,
            author: row.author,
            resourceURI: toUri(row),
            versionedURI: versionedUri(row),
            resourcesList: null,
            lockID: lock.lockId,
            lockExpirationDate: new Date(lock.expiresAt).toISOString(),
            resourceName: row.name,
            ...dimensionsOf(row),
          },
          200,
        );
      },
    )
    .openapi(guarded(contract.deleteResource, creator), async (c) => {
      const { resourceUID, author, lockID } = c.req.valid("json");
      const cached = await cachedContent?.removing(resourceUID);
      const row = await lifecycle.remove({ name: resourceUID, owner: author, lockId: lockID }, c.get("principal"));
      if (cached) staleAfter(c, cached);
      return c.json(toResourceView(row), 200);
    })
    .openapi(guarded(contract.purgeResource, guards.role("admin")), async (c) => {
      const { resourceUID } = c.req.valid("json");
      // Read before the purge: it takes the rows and revisions that name the cached URLs with it.
      const cached = await cachedContent?.removing(resourceUID);
      const { uids, blobsRemoved } = await lifecycle.purge(resourceUID, c.get("principal"));
      if (cached) staleAfter(c, cached);
      return c.json({ purged: uids, blobsRemoved }, 200);
    })
    .openapi(guarded(contract.getRevisions, guards.role("consumer")), async (c) => {
      const { resourceUID } = c.req.valid("param");
      const rows = await revisions.list(resourceUID, c.get("principal"));
      return c.json({ resourceUID, revisions: rows.map(toRevisionView) }, 200);
    })
    .openapi(guarded(contract.getRevisionData, guards.read), async (c) => {
      const { resourceUID, revision } = c.req.valid("param");
      const row = await revisions.content(resourceUID, revision, c.get("principal"));
      // A revision's content never changes: immutable, unless a signed link's lifetime bounds it.
      const linkSeconds = c.get("signedLinkSeconds");
      const cache = answerCacheHeaders(content.cache, true, linkSeconds);
      const header = (name: string) => c.req.raw.headers.get(name);
      return (await send(row, c.req.method, header, requestHost(c), cache, linkSeconds)) as never;
    });
}
