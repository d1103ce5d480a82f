/**
 * The six descriptive fields of a resource (issue 38) as stored: their columns at creation, and a
 * JSON Merge Patch (RFC 7396) over them for updateResourceMetadata. Validation of each value is the
 * schemas' job (routes/resources/description-schemas.ts); this module only combines valid values.
 */
import type { ResourceRow } from "../metadata/schema.js";

export type JsonObject = { [key: string]: unknown };

/** What a create gives (absent or null: unset). */
export interface DescriptionInput {
  title?: string | null;
  description?: string | null;
  altText?: string | null;
  tags?: string[] | null;
  folder?: string | null;
  metadata?: JsonObject | null;
}

export type DescriptionColumns = Pick<
  ResourceRow,
  "title" | "description" | "altText" | "tags" | "tagKeys" | "folder" | "metadata"
>;

/** Tags compare case-insensitively (Unicode case folding, which SQLite's lower() lacks). */
export const tagKey = (tag: string): string => tag.toLowerCase();

export const ROOT_FOLDER = "/";

/** The stored columns of a description; unset fields at their empty values. */
export const descriptionColumns = (d: DescriptionInput = {}): DescriptionColumns => ({
  title: d.title ?? null,
  description: d.description ?? null,
  altText: d.altText ?? null,
  tags: JSON.stringify(d.tags ?? []),
  tagKeys: JSON.stringify((d.tags ?? []).map(tagKey)),
  folder: d.folder ?? ROOT_FOLDER,
  metadata: JSON.stringify(d.metadata ?? {}),
});

/** A description as answers show it: every field present. */
export interface Description {
  title: string | null;
  description: string | null;
  altText: string | null;
  tags: string[];
  folder: string;
  metadata: JsonObject;
}

/** The stored columns read back as values. */
export function descriptionOf(row: DescriptionColumns): Description {
  return {
    title: row.title,
    description: row.description,
    altText: row.altText,
    tags: JSON.parse(row.tags) as string[],
    folder: row.folder,
    metadata: JSON.parse(row.metadata) as JsonObject,
  };
}

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** RFC 7396 §2 MergePatch: objects merge key by key (null removes a key); anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The description after `patch`: a field set to null is unset (tags `[]`, folder `/`, metadata `{}`);
 * metadata merges key by key; the others are replaced. Fields the patch leaves out keep their value.
 */
export function patchedDescription(row: DescriptionColumns, patch: DescriptionInput): DescriptionInput {
  const current = descriptionOf(row);
  const merged = mergePatch(current, patch) as DescriptionInput;
  return { ...merged, metadata: (merged.metadata as JsonObject | undefined) ?? {} };
}

/** The answers' opaque metadataVersion. */
export const metadataVersionOf = (row: Pick<ResourceRow, "metadataVersion">): string => String(row.metadataVersion);
