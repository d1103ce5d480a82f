/**
 * The HTTP representation of stored content: what answerBlob/serveBlob need for a row (validators,
 * Content-Type, disposition and CSP per origin: content-policy.ts) and how to open its bytes. The
 * content service only stores and reads bytes; deciding how a browser may show them is HTTP's.
 */
import { dataPath } from "../api-paths.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ContentService } from "../services/content.js";
import { versionOf } from "../services/revisions.js";
import type { BlobEntity, OpenBlob } from "../http/blob-entity.js";
import { cacheControl } from "../http/cache-policy.js";
import { contentPolicy } from "../http/content-policy.js";

export type Served = { entity: BlobEntity; open: OpenBlob };

export interface ContentEntities {
  /**
   * What serveBlob needs to answer GET/HEAD for a row asked for on `requestHost` (the request
   * URL's host). A frozen row (the row cache's: it never changes in place) gets one frozen answer
   * per origin, so serving it again rebuilds nothing and answerBlob can keep its headers too.
   */
  serve(facts: ContentFacts, requestHost: string | undefined): Served;
}

/**
 * From a resource's mutable URL to the versioned URL of the same bytes. `duplicate` (RFC 6249: the
 * target is an identical copy of this representation) is what holds: `canonical` would tell crawlers
 * and caches to prefer a URL that stops being current at the next update. A client (or a CDN worker)
 * can fetch the target and keep it for good.
 */
function versionLink(facts: ContentFacts): string | undefined {
  if (!("context" in facts && "path" in facts)) return undefined; // a revision's content: already fixed
  const row = facts as ContentFacts & { context: string; path: string };
  return `<${dataPath(row)}?v=${versionOf(facts.sha256)}>; rel="duplicate"`;
}

/** What the entities need of the content service; without `cache`, reads count as private. */
type EntitySource = Pick<ContentService, "read" | "contentOrigin"> & Partial<Pick<ContentService, "cache">>;
const PRIVATE = { publicRead: false, maxAge: 0, staleWhileRevalidate: 0 };

function createContentEntities(content: EntitySource): ContentEntities {
  // The mutable URL's policy is fixed per process; versioned URLs, revisions and signed links override it per answer.
  const mutable = cacheControl(content.cache ?? PRIVATE, { kind: "mutable" });
  const contentHost = content.contentOrigin ? new URL(content.contentOrigin).host : undefined;
  // A Host header spelled as a URL would (case, default port), so raw node:http headers and
  // Hono's request URL reach the same decision.
  const onContentOrigin = (host: string | undefined) =>
    host !== undefined && URL.canParse(`http://${host}`) && new URL(`http://${host}`).host === contentHost;

  const served = (facts: ContentFacts, apiOriginOnly: boolean): Served => {
    const policy = contentPolicy({ mediaType: facts.mediaType, packageFile: Boolean(facts.parentUid), apiOriginOnly });
    return {
      entity: {
        size: facts.size,
        etag: `"${facts.sha256}"`,
        sha256: facts.sha256,
        lastModified: new Date(facts.updatedAt),
        contentType: policy.contentType,
        // Files of a package are named by their path; the download name is its last segment.
        filename: facts.name.slice(facts.name.lastIndexOf("/") + 1),
        disposition: policy.disposition,
        contentSecurityPolicy: policy.csp,
        cacheControl: mutable,
        link: versionLink(facts),
      },
      open: (range) => content.read(facts, range),
    };
  };
  /** Answers for frozen rows, per origin; they go with their row (rows that change are new objects). */
  const servedRows = new WeakMap<ContentFacts, { api?: Served; content?: Served }>();

  return {
    serve(facts, requestHost) {
      const apiOriginOnly = contentHost !== undefined && !onContentOrigin(requestHost);
      const slot = apiOriginOnly ? "api" : "content";
      // Looked up before asking whether the row is frozen: only frozen rows are ever kept, and
      // Object.isFrozen checks every field of a row (30 columns; V8 and JSC each walk the
      // properties): it ran per request on every 304, non-plain range and app read.
      const known = servedRows.get(facts);
      let answer = known?.[slot];
      if (answer) return answer;
      if (!Object.isFrozen(facts)) return served(facts, apiOriginOnly);
      answer = served(facts, apiOriginOnly);
      Object.freeze(answer.entity);
      servedRows.set(facts, { ...known, [slot]: answer });
      return answer;
    },
  };
}

/** One per content service: the route and the runtimes' fast paths share its per-row answers. */
const entitiesOf = new WeakMap<object, ContentEntities>();

/** The representations of `content`'s blobs (built once per service; call it once, not per request). */
export function contentEntities(content: EntitySource): ContentEntities {
  let entities = entitiesOf.get(content);
  if (!entities) {
    entities = createContentEntities(content);
    entitiesOf.set(content, entities);
  }
  return entities;
}
