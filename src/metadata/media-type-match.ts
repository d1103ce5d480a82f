/** The media type filter of listResources and searchResources. */
import { type SQL, sql } from "drizzle-orm";

/** A media type filter on a type's essence: exact, or `type/*` for a whole family (compared by prefix, no wildcards). */
export function mediaTypeMatch(essence: SQL, wanted: string): SQL {
  if (!wanted.endsWith("/*")) return sql`${essence} = ${wanted}`;
  const family = wanted.slice(0, -1);
  return sql`substr(${essence}, 1, ${family.length}) = ${family}`;
}
