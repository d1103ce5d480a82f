/** Issue 38's endpoints: thin handlers over the finding service. */
import type { Guards } from "../../auth/guards.js";
import { toFieldErrors } from "../../http/problem-handlers.js";
import { matchExpression, searchTerms, tagCondition } from "../../lib/search-query.js";
import type { SearchQuery } from "../../metadata/search-store.js";
import { ProblemError } from "../../problems.js";
import { tagKey } from "../../services/descriptions.js";
import type { FindingService } from "../../services/finding.js";
import { toResourceItem, toResourceView } from "../resources/views.js";
import { createRouter, guarded } from "../router.js";
import * as contract from "./contract.js";
import { decodeSearchCursor, encodeSearchCursor, PatchedDescriptionSchema, type SearchParameters } from "./schemas.js";

/** `If-Match: "3"` → "3"; `*` (any version) or none → undefined. */
function ifMatchVersion(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (value === undefined || value === "*") return undefined;
  const quoted = /^(?:W\/)?"([^"]*)"$/.exec(value);
  if (!quoted) {
    const detail = 'must be the metadataVersion in double quotes, e.g. "3"';
    throw new ProblemError("VALIDATION_FAILED", `invalid If-Match: ${detail}`, {
      errors: [{ pointer: "/header/if-match", detail }],
    });
  }
  return quoted[1];
}

/** The patched description must still keep the limits (a merged metadata may outgrow its 16 KiB). */
function validatePatched(description: unknown): void {
  const parsed = PatchedDescriptionSchema.safeParse(description);
  if (parsed.success) return;
  const errors = toFieldErrors(parsed.error, "json").map((e) => ({
    ...e,
    pointer: e.pointer.replace(/^\/json/, "/json/patch"),
  }));
  throw new ProblemError("VALIDATION_FAILED", "the patched description breaks a limit", { errors });
}

/** The store's query for valid parameters (the schema checked q, the cursor and the sort). */
export function toSearchQuery(p: SearchParameters): SearchQuery {
  const tags = p.tag ?? [];
  return {
    tenantId: p.tenant,
    match: p.q === undefined ? undefined : matchExpression(searchTerms(p.q)),
    tagKeys: tags.map(tagKey),
    tagMatches: tags.map(tagCondition).filter((m) => m !== null),
    folder: p.folder,
    recursive: p.recursive === "true",
    mediaType: p.mediaType,
    createdAfter: p.createdAfter,
    createdBefore: p.createdBefore,
    sort: p.sort ?? (p.q === undefined ? "-createdAt" : "relevance"),
    after: p.cursor === undefined ? undefined : decodeSearchCursor(p.cursor)?.position,
    limit: p.limit + 1,
  };
}

export function createFindingRouter({ finding, guards }: { finding: FindingService; guards: Guards }) {
  const consumer = guards.role("consumer");
  return createRouter()
    .openapi(guarded(contract.updateResourceMetadata, guards.role("creator")), async (c) => {
      const body = c.req.valid("json");
      const row = await finding.updateMetadata(
        {
          uid: body.resourceUID,
          patch: body.patch,
          ifMatch: ifMatchVersion(c.req.header("if-match")),
          lockId: body.lockID ?? undefined,
          validate: validatePatched,
        },
        c.get("principal"),
      );
      return c.json(toResourceView(row), 200);
    })
    .openapi(guarded(contract.searchResources, consumer), async (c) => {
      const query = toSearchQuery(c.req.valid("query"));
      const hits = await finding.search(query, c.get("principal"));
      const page = hits.slice(0, query.limit - 1);
      const last = page.at(-1);
      return c.json(
        {
          items: page.map((hit) => toResourceItem(hit.row)),
          nextCursor: hits.length > page.length && last ? encodeSearchCursor(query.sort, last.position) : null,
        },
        200,
      );
    })
    .openapi(guarded(contract.folders, consumer), async (c) => {
      const { tenant, parent } = c.req.valid("query");
      return c.json({ folders: await finding.folders(tenant, parent, c.get("principal")) }, 200);
    });
}
