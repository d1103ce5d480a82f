/** zod schemas of updateResourceMetadata, searchResources and folders (issue 38). */
import { z } from "@hono/zod-openapi";
import { SEARCH_SORTS, type SearchPosition, type SearchSort } from "../../metadata/search-store.js";
import { SearchQueryError, searchTerms } from "../../lib/search-query.js";
import {
  AltTextSchema,
  DescriptionFields,
  DescriptionSchema,
  FolderSchema,
  MAX_TAGS,
  MetadataSchema,
  TagSchema,
  TagsSchema,
  TitleSchema,
} from "../resources/description-schemas.js";
import {
  base64url,
  DateTimeSchema,
  ResourceItemSchema,
  ResourceUidSchema,
  TenantIdSchema,
} from "../resources/schemas.js";

/** The patch: any of the six fields; null removes one (tags [], folder /, metadata {}). */
export const DescriptionPatchSchema = z
  .strictObject({
    title: TitleSchema.nullable().optional(),
    description: DescriptionSchema.nullable().optional(),
    altText: AltTextSchema.nullable().optional(),
    tags: TagsSchema.nullable().optional(),
    folder: FolderSchema.nullable().optional(),
    metadata: MetadataSchema.nullable()
      .optional()
      .openapi({ description: "Merged key by key (RFC 7396): a key set to null is removed; null removes them all." }),
  })
  .openapi("DescriptionPatch", {
    description: "A JSON Merge Patch (RFC 7396) over the descriptive fields; fields left out keep their value.",
  });

export const UpdateResourceMetadataRequestSchema = z
  .object({
    resourceUID: ResourceUidSchema,
    patch: DescriptionPatchSchema,
    lockID: z
      .string()
      .max(400)
      .nullish()
      .openapi({ description: "The lockID of your lock: needed while the resource is locked (423 otherwise)." }),
  })
  .openapi("UpdateResourceMetadataRequest");

export const UPDATE_METADATA_EXAMPLE = {
  resourceUID: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345",
  patch: { title: "Company logo", tags: ["brand"], metadata: { campaign: null } },
};

/** The description after the patch, checked whole (a merged metadata may outgrow its limit). */
export const PatchedDescriptionSchema = z.object(DescriptionFields);

/**
 * Opaque keyset cursor: the sort it belongs to, and the sort key and UID of a page's last row; by
 * relevance also its seq (equal ranks are ordered by it).
 */
export const encodeSearchCursor = (sort: SearchSort, position: SearchPosition) =>
  base64url(
    JSON.stringify(
      sort === "relevance" ? [sort, position.key, position.uid, position.seq] : [sort, position.key, position.uid],
    ),
  );

export function decodeSearchCursor(text: string): { sort: SearchSort; position: SearchPosition } | null {
  try {
    const bytes = Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
    const [sort, key, uid, seq] = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
    const validKey = typeof key === "string" || (typeof key === "number" && Number.isFinite(key));
    const validSeq = sort !== "relevance" || (Number.isSafeInteger(seq) && (seq as number) >= 0);
    if (SEARCH_SORTS.includes(sort as SearchSort) && validKey && typeof uid === "string" && validSeq) {
      const position: SearchPosition = { key: key as string | number, uid };
      if (sort === "relevance") position.seq = seq as number;
      return { sort: sort as SearchSort, position };
    }
  } catch {
    // null below
  }
  return null;
}

const MEDIA_TYPE_FILTER = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/(?:[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*|\*)$/;
export const MAX_SEARCH_PAGE = 100;

export const SearchQuerySchema = z
  .object({
    tenant: TenantIdSchema.openapi({ description: "The tenant to search (required)." }),
    q: z
      .string()
      .superRefine((q, ctx) => {
        try {
          searchTerms(q);
        } catch (err) {
          if (!(err instanceof SearchQueryError)) throw err;
          ctx.addIssue({ code: "custom", message: err.message });
        }
      })
      .optional()
      .openapi({
        description:
          'Full text over name, title, description, altText and tags: words ANDed, `"a phrase"`, `sun*` a prefix (2+ characters); whole words, case- and accent-insensitive. At most 200 characters and 8 terms.',
        example: 'harbour "at dawn"',
      }),
    tag: z
      .preprocess((v) => (Array.isArray(v) ? v : [v]), z.array(TagSchema).max(MAX_TAGS))
      .optional()
      .openapi({
        type: "array",
        items: { type: "string" },
        description: "Repeatable: every tag given must be on the resource (case-insensitive).",
      }),
    folder: FolderSchema.optional().openapi({ description: "Only this folder (with recursive=true: and below)." }),
    recursive: z
      .enum(["true", "false"], { message: "must be true or false" })
      .optional()
      .openapi({ description: "With folder: the folder and everything under it." }),
    mediaType: z
      .string()
      .max(255)
      .regex(MEDIA_TYPE_FILTER, { message: "must be a media type (image/png) or a family (image/*)" })
      .optional()
      .openapi({ description: "`image/png`, or a family: `image/*`." }),
    createdAfter: DateTimeSchema.optional().openapi({ description: "Created after (exclusive), RFC 3339." }),
    createdBefore: DateTimeSchema.optional().openapi({ description: "Created before (exclusive), RFC 3339." }),
    sort: z
      .enum(SEARCH_SORTS, { message: `must be one of ${SEARCH_SORTS.join(", ")}` })
      .optional()
      .openapi({
        description:
          "`relevance` (the default with q; needs q), `createdAt`, `-createdAt` (the default without q), `name`.",
      }),
    limit: z.coerce
      .number()
      .int({ message: "must be an integer" })
      .min(1, { message: "must be at least 1" })
      .max(MAX_SEARCH_PAGE, { message: `must be at most ${MAX_SEARCH_PAGE}` })
      .default(20),
    cursor: z.string().max(1000).optional().openapi({ description: "`nextCursor` of the previous page." }),
  })
  // Refinements, not transforms: the query must stay a plain object for the OpenAPI parameters.
  .superRefine((q, ctx) => {
    if (q.sort === "relevance" && q.q === undefined)
      ctx.addIssue({ code: "custom", path: ["sort"], message: "relevance needs q" });
    if (q.recursive !== undefined && q.folder === undefined)
      ctx.addIssue({ code: "custom", path: ["recursive"], message: "needs folder" });
    if (q.cursor !== undefined) {
      const cursor = decodeSearchCursor(q.cursor);
      if (!cursor)
        ctx.addIssue({ code: "custom", path: ["cursor"], message: "is not a cursor searchResources returned" });
      else if (cursor.sort !== (q.sort ?? (q.q === undefined ? "-createdAt" : "relevance")))
        ctx.addIssue({ code: "custom", path: ["cursor"], message: "belongs to another sort order" });
    }
  });

export type SearchParameters = z.infer<typeof SearchQuerySchema>;

export const SearchPageSchema = z
  .object({
    items: z.array(ResourceItemSchema),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: "Pass as `cursor` for the next page; null on the last page." }),
  })
  .openapi("SearchPage");

export const FoldersQuerySchema = z.object({
  tenant: TenantIdSchema.openapi({ description: "The tenant (required)." }),
  parent: FolderSchema.default("/").openapi({ description: "The folder whose subfolders to list; `/` by default." }),
});

export const FolderListSchema = z
  .object({
    folders: z.array(
      z.object({
        path: z.string().openapi({ example: "/brand/" }),
        resources: z.number().int().openapi({ description: "Live resources directly in this folder." }),
        folders: z.number().int().openapi({ description: "Its direct subfolders that hold resources." }),
      }),
    ),
  })
  .openapi("FolderList");
