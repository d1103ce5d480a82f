/**
 * SearchStore (issue 38): finding a tenant's resources by text, tags, folder, type and date, the
 * folder tree, and the descriptive fields' one write (updateResourceMetadata). Full text comes from
 * `resources_fts` (FTS5 keyed on `resources.seq`, kept in step by triggers: migrations 0015, 0016); every query is
 * confined to one tenant's live top-level resources (a package's files are found through it).
 */
import { and, eq, getTableColumns, isNull, type SQL, sql } from "drizzle-orm";
import { mediaTypeMatch } from "./media-type-match.js";
import type { BatchSQLiteDatabase, LockProof } from "./store-types.js";
import { folderCounts, type ResourceRow, resources } from "./schema.js";
import { recordEvents } from "./webhook-store.js";

export const SEARCH_SORTS = ["relevance", "createdAt", "-createdAt", "name"] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

/** Keyset position: the sort key and UID of the last row of the previous page. */
export interface SearchPosition {
  key: number | string;
  uid: string;
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

export function createSearchStore(db: BatchSQLiteDatabase): SearchStore {
  return {
    async search(q) {
      const match = [q.match, ...q.tagMatches].filter((m) => m !== undefined).join(" AND ");
      const key = SORT_KEY[q.sort];
      const descending = q.sort === "-createdAt";
      const beyond = descending ? sql`<` : sql`>`;
      const direction = descending ? sql`desc` : sql`asc`;
      const essence = sql`lower(trim(substr(r.media_type, 1, instr(r.media_type || ';', ';') - 1)))`;
      const conditions: (SQL | undefined)[] = [
        match ? sql`resources_fts match ${match}` : undefined,
        sql`r.tenant_id = ${q.tenantId}`,
        sql`r.deleted_at is null`,
        sql`r.parent_uid is null`,
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
          : sql`(${key} ${beyond} ${q.after.key} or (${key} = ${q.after.key} and r.uid ${beyond} ${q.after.uid}))`,
      ];
      const from = match ? sql`resources_fts join ${resources} r on r.seq = resources_fts.rowid` : sql`${resources} r`;
      // The page's keys first, the whole rows then: a search with many hits (a prefix) sorts only
      // rowid, key and uid of each, not every column (about half its time at 1M rows, bench/search.ts).
      const page = sql`select r.rowid as hit, ${key} as sort_key, r.uid as uid from ${from} where ${and(...conditions)} order by ${key} ${direction}, r.uid ${direction} limit ${q.limit}`;
      const rows = await db.all<Record<string, unknown>>(
        sql`select r.*, p.sort_key from (${page}) p join ${resources} r on r.rowid = p.hit order by p.sort_key ${direction}, p.uid ${direction}`,
      );
      return rows.map((raw) => {
        const row = toRow(raw);
        return { row, position: { key: raw.sort_key as number | string, uid: row.uid } };
      });
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
