/**
 * A getData of `?v=<hex>` naming the row's current content (issue 28), which the runtimes' fast
 * paths answer as the route does (services/revisions.ts `byVersion`): the same bytes under the
 * immutable policy, no pointer further. An earlier revision's `v` (a database read): null, and the
 * app answers (core.ts).
 */
import type { ContentFacts } from "../metadata/content-facts.js";
import type { ResourceRow } from "../metadata/schema.js";
import { currentContentFacts } from "../services/revisions.js";

/** `row`'s current content when `version` (a VERSION_PATTERN, query.ts) names it; else null (the app's). */
export const currentVersionOf = (row: ResourceRow, version: string): ContentFacts | null =>
  row.sha256.startsWith(version.toLowerCase()) ? currentContentFacts(row) : null;
