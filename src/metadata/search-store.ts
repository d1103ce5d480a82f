/**
 * SearchStore (issue 38): finding a tenant's resources by text, tags, folder, type and date, the
 * folder tree, and the descriptive fields' one write (updateResourceMetadata). Full text comes from
 * `resources_fts` (contentless FTS5 of the live top-level resources, each keyed `tenant no × 2^40 +
 * seq`, kept in step by triggers: migrations 0015–0017); every query is confined to one tenant's live
 * top-level resources (a package's files are found through it), and a text query to its key range.
 */
import { and, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import { mediaTypeMatch } from "./media-type-match.js";
import type { BatchSQLiteDatabase, LockProof } from "./store-types.js";
import { folderCounts, type ResourceRow, resources } from "./schema.js";
import { recordEvents } from "./webhook-store.js";

export const SEARCH_SORTS = ["relevance", "createdAt", "-createdAt", "name"] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

/**
 * Keyset position: the sort key and UID of the last row of the previous page; by relevance also its
 * seq, which orders equal ranks (in the order added): the index alone pages by rank without a UID.
 */
export interface SearchPosition {
  key: number | string;
  uid: string;
  seq?: number;
}

export interface SearchQuery {
  tenantId: string;
  /** An FTS5 MATCH expression built by lib/search-query.ts (never a user's raw text). */
  match?: string;
  /** Case-folded tags (descriptions.ts tagKey), each of which a row must have. */
  tagKeys: string[];
  /** Extra MATCH conditions narrowing the tags (lib/search-query.ts tagCondition). */
  tagMatches: string[];
  folder?: string;
  /** With `folder`: the folder and everything under it. */
  recursive: boolean;
  mediaType?: string;
  /** Exclusive bounds, epoch ms. */
  createdAfter?: number;
  createdBefore?: number;
  sort: SearchSort;
  after?: SearchPosition;
  limit: number;
}

export interface SearchHit {
  row: ResourceRow;
  /** The row's position, for the next page's cursor. */
  position: SearchPosition;
}

export interface FolderEntry {
  path: string;
  /** Live resources directly in this folder. */
  resources: number;
  /** Its direct subfolders that hold resources. */
  folders: number;
}

export interface DescriptionChange {
  uid: string;
  /** The metadataVersion the caller read: the change applies only if it is still the current one. */
  expectedVersion: number;
  columns: Pick<ResourceRow, "title" | "description" | "altText" | "tags" | "tagKeys" | "folder" | "metadata">;
  /** The caller's lock, if it sent one: needed while the resource is locked. */
  lock: Pick<LockProof, "lockId" | "holder"> | null;
  actor: string | null;
  now: number;
}

export interface SearchStore {
  search(query: SearchQuery): Promise<SearchHit[]>;
  /** The direct subfolders of `parent` holding live resources, in path order. */
  folders(tenantId: string, parent: string): Promise<FolderEntry[]>;
  /** Writes the description with its webhook event if the version and lock allow; null if not. */
  updateDescription(change: DescriptionChange): Promise<ResourceRow | null>;
}

const COLUMNS = Object.entries(getTableColumns(resources));

/** A raw `r.*` row (column names) as drizzle's ResourceRow (property names). */
function toRow(raw: Record<string, unknown>): ResourceRow {
  const row: Record<string, unknown> = {};
  for (const [key, column] of COLUMNS) row[key] = raw[column.name] ?? null;
  return row as ResourceRow;
}

/** The first string after `prefix` in code-unit order that does not start with it: the end of its range. */
const rangeEnd = (prefix: string) =>
  prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);

const SORT_KEY: Record<SearchSort, SQL> = {
  relevance: sql`resources_fts.rank`,
  createdAt: sql`r.created_at`,
  "-createdAt": sql`r.created_at`,
  name: sql`r.name`,
};

/** A tenant's keys in resources_fts are `no × 2^40 + seq` (migration 0017): seq is the key modulo this. */
const KEY_SPAN = 1099511627776;

/** The first key of the tenant's range; a tenant never numbered gets -2^40, a range no key is in. */
const rangeStart = (tenantId: string) =>
  sql`(select coalesce((select no from search_tenants where tenant_id = ${tenantId}), -1) * ${KEY_SPAN})`;

/** The FTS5 conditions of a text query: the match, read only within the tenant's range of keys. */
const textConditions = (match: string, tenantId: string) => {
  const start = rangeStart(tenantId);
  return sql`resources_fts match ${match} and resources_fts.rowid between ${start} and ${start} + ${KEY_SPAN - 1}`;
};

/** Beyond a relevance position: a higher rank (less relevant), or the same rank and a later row. */
const beyondRelevance = (after: SearchPosition) =>
  sql`(resources_fts.rank > ${after.key} or (resources_fts.rank = ${after.key} and resources_fts.rowid % ${KEY_SPAN} > ${after.seq ?? 0}))`;

/** Every live top-level row of the tenant (what a search may find, whatever else it asks). */
const findable = (tenantId: string) => sql`r.tenant_id = ${tenantId} and r.deleted_at is null and r.parent_uid is null`;

/** Raw rows (r.*, sort_key, and hit_key by relevance) as hits with their positions. */
const toHits = (rows: Record<string, unknown>[]): SearchHit[] =>
  rows.map((raw) => {
    const row = toRow(raw);
    const position: SearchPosition = { key: raw.sort_key as number | string, uid: row.uid };
    if (raw.hit_key !== undefined) position.seq = Number(raw.hit_key) % KEY_SPAN;
    return { row, position };
  });

export function createSearchStore(db: BatchSQLiteDatabase): SearchStore {
  /**
   * By relevance with nothing but the text: ranked on the index alone (FTS5's bm25 over the tenant's
   * range), then whole rows for the page only: no resources row is looked up per hit. Equal ranks go
   * in the order the rows were added, the order FTS5 reads them: SQLite's top-N sort then skips
   * every later equal row with one comparison (newest first inserted each one: +7 ms CPU for a
   * prefix with 11 100 equal hits at 1M rows, bench/search.ts).
   */
  async function byRelevance(q: SearchQuery, match: string): Promise<SearchHit[]> {
    const beyond = q.after === undefined ? sql`` : sql` and ${beyondRelevance(q.after)}`;
    const ranked = sql`select resources_fts.rowid as hit_key, resources_fts.rank as sort_key from resources_fts where ${textConditions(match, q.tenantId)}${beyond} order by resources_fts.rank asc, resources_fts.rowid asc limit ${q.limit}`;
    const rows = await db.all<Record<string, unknown>>(
      sql`select r.*, p.sort_key, p.hit_key from (${ranked}) p join ${resources} r on r.seq = p.hit_key % ${KEY_SPAN} where ${findable(q.tenantId)} order by p.sort_key asc, p.hit_key asc`,
    );
    return toHits(rows);
  }

  return {
    async search(q) {
      const match = [q.match, ...q.tagMatches].filter((m) => m !== undefined).join(" AND ");
      const onlyText =
        q.tagKeys.length === 0 &&
        q.folder === undefined &&
        q.mediaType === undefined &&
        q.createdAfter === undefined &&
        q.createdBefore === undefined;
      if (match && q.sort === "relevance" && onlyText) return byRelevance(q, match);
      const key = SORT_KEY[q.sort];
      const descending = q.sort === "-createdAt";
      const beyond = descending ? sql`<` : sql`>`;
      const direction = descending ? sql`desc` : sql`asc`;
      // By relevance, equal ranks go in the order they were added (the index's key), as in byRelevance.
      const tieBreak = q.sort === "relevance" ? sql`resources_fts.rowid asc` : sql`r.uid ${direction}`;
      const essence = sql`lower(trim(substr(r.media_type, 1, instr(r.media_type || ';', ';') - 1)))`;
      const conditions: (SQL | undefined)[] = [
        match ? textConditions(match, q.tenantId) : undefined,
        findable(q.tenantId),
        ...q.tagKeys.map((tag) => sql`exists (select 1 from json_each(r.tag_keys) where value = ${tag})`),
        q.folder === undefined
          ? undefined
          : q.recursive
            ? sql`r.folder >= ${q.folder} and r.folder < ${rangeEnd(q.folder)}`
            : sql`r.folder = ${q.folder}`,
        q.mediaType === undefined ? undefined : mediaTypeMatch(essence, q.mediaType.toLowerCase()),
        q.createdAfter === undefined ? undefined : sql`r.created_at > ${q.createdAfter}`,
        q.createdBefore === undefined ? undefined : sql`r.created_at < ${q.createdBefore}`,
        q.after === undefined
          ? undefined
          : q.sort === "relevance"
            ? beyondRelevance(q.after)
            : sql`(${key} ${beyond} ${q.after.key} or (${key} = ${q.after.key} and r.uid ${beyond} ${q.after.uid}))`,
      ];
      const from = match
        ? sql`resources_fts join ${resources} r on r.seq = resources_fts.rowid % ${KEY_SPAN}`
        : sql`${resources} r`;
      const hitKey = q.sort === "relevance" ? sql`, resources_fts.rowid as hit_key` : sql``;
      // The page's keys first, the whole rows then: a search with many hits (a prefix) sorts only
      // rowid, key and uid of each, not every column (about half its time at 1M rows, bench/search.ts).
      const page = sql`select r.rowid as hit, ${key} as sort_key, r.uid as uid${hitKey} from ${from} where ${and(...conditions)} order by ${key} ${direction}, ${tieBreak} limit ${q.limit}`;
      const outerTie = q.sort === "relevance" ? sql`p.hit_key asc` : sql`p.uid ${direction}`;
      const rows = await db.all<Record<string, unknown>>(
        sql`select r.*, p.sort_key${q.sort === "relevance" ? sql`, p.hit_key` : sql``} from (${page}) p join ${resources} r on r.rowid = p.hit order by p.sort_key ${direction}, ${outerTie}`,
      );
      return toHits(rows);
    },

    async folders(tenantId, parent) {
      // One range of folder_counts (kept by migration 0016's triggers): every folder in use under `parent`.
      const rows = await db.all<{ folder: string; n: number }>(
        sql`select folder, resources as n from ${folderCounts} where tenant_id = ${tenantId} and folder > ${parent} and folder < ${rangeEnd(parent)}`,
      );
      const children = new Map<string, { resources: number; folders: Set<string> }>();
      for (const { folder, n } of rows) {
        const [child, grandchild] = folder.slice(parent.length).split("/");
        const path = `${parent}${child}/`;
        const entry = children.get(path) ?? { resources: 0, folders: new Set<string>() };
        children.set(path, entry);
        if (folder === path) entry.resources += Number(n);
        else entry.folders.add(grandchild as string);
      }
      return [...children.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([path, entry]) => ({ path, resources: entry.resources, folders: entry.folders.size }));
    },

    async updateDescription(c) {
      const lockFree = sql`not exists (select 1 from locks where name = ${c.uid} and expires_at > ${c.now})`;
      const lockHeld = c.lock
        ? sql`exists (select 1 from locks where name = ${c.uid} and lock_id = ${c.lock.lockId} and holder is ${c.lock.holder} and expires_at > ${c.now})`
        : sql`0`;
      const changed = and(
        eq(resources.uid, c.uid),
        eq(resources.metadataVersion, c.expectedVersion + 1),
        eq(resources.updatedAt, c.now),
      ) as SQL;
      const [updated] = await db.batch([
        db
          .update(resources)
          .set({ ...c.columns, metadataVersion: c.expectedVersion + 1, updatedAt: c.now })
          .where(
            and(
              eq(resources.uid, c.uid),
              isNull(resources.deletedAt),
              eq(resources.metadataVersion, c.expectedVersion),
              sql`(${lockFree} or ${lockHeld})`,
            ),
          )
          .returning(),
        // In the change's own transaction, as every event: no change without its event, nor the reverse.
        recordEvents(db, "resource.metadata_updated", changed, c.actor, c.now),
      ]);
      return updated[0] ?? null;
    },
  };
}
