/**
 * A getData of `?v=<hex>` naming the row's current content (issue 28), which the runtimes' fast
 * paths answer as the route does (services/revisions.ts `byVersion`): the same bytes under the
 * immutable policy, no pointer further. An earlier revision's `v` (a database read), an unknown or
 * malformed one, or any other query: null, and the app answers (its 404, its 400).
 */
import type { ResourceRow } from "../metadata/schema.js";
import type { ContentFacts } from "../metadata/content-facts.js";
import { currentContentFacts } from "../services/revisions.js";

/** The query text (after `?`) of a versioned URL: `v` alone, a VERSION_PATTERN (services/revisions.ts). */
const VERSIONED_QUERY = /^v=([0-9a-fA-F]{16,64})$/;

/** `row`'s current content when `query` is exactly a `v` naming it; else null (the app's). */
export function currentVersionOf(row: ResourceRow, query: string): ContentFacts | null {
  const version = VERSIONED_QUERY.exec(query)?.[1];
  return version !== undefined && row.sha256.startsWith(version.toLowerCase()) ? currentContentFacts(row) : null;
}
