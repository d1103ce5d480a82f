/** zod schemas for the resource endpoints. Types are inferred from these, never written twice. */
import { z } from "@hono/zod-openapi";
import { isBase64 } from "../../lib/base64.js";
import { RESTRICTED_NAME } from "../../lib/media-types.js";
import { hasBidiControl, hasControlChar, hasLineSeparator } from "../../lib/name-chars.js";
import { DescriptionFields, DescriptionViewFields } from "./description-schemas.js";

const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/** RFC 6838 §4.2 type/subtype, with optional RFC 9110 §5.6.6 parameters (token=token|quoted-string). */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[\\t !#-\\[\\]-~]|\\\\[\\t !-~])*"';
const MEDIA_TYPE = new RegExp(
  `^${RESTRICTED_NAME}/${RESTRICTED_NAME}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))*$`,
);

export const TENANT_ID_PATTERN = "^[A-Za-z0-9._~-]{1,64}$";

export const TenantIdSchema = z
  .string()
  .regex(new RegExp(TENANT_ID_PATTERN), { message: "must be 1-64 URL-safe characters (A-Z a-z 0-9 . _ ~ -)" })
  .openapi({ example: "zaq12345" });

export const ResourceNameSchema = z
  .string()
  .min(1, { message: "must not be empty" })
  .refine((s) => utf8Length(s) <= 255, { message: "must be at most 255 bytes of UTF-8" })
  .refine((s) => !/[/\\]/.test(s), { message: "must be a file name: no '/' or '\\'" })
  .refine((s) => !hasControlChar(s), { message: "must not contain control characters or NUL" })
  .refine((s) => s !== "." && s !== "..", { message: "must not be '.' or '..'" })
  // U+2028/U+2029 are line terminators to the router's patterns: a name holding one could be stored but never served.
  .refine((s) => !hasLineSeparator(s), { message: "must not contain line or paragraph separators (U+2028, U+2029)" })
  // A name must display as what it is: "invoice\u202Efdp.exe" would show as "invoiceexe.pdf".
  .refine((s) => !hasBidiControl(s), {
    message:
      "must not contain bidirectional formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)",
  })
  .openapi({ example: "logo.png", description: "A file name (no path separators), at most 255 bytes of UTF-8." });

export const AuthorSchema = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(256, { message: "must be at most 256 characters" })
  .refine((s) => !hasControlChar(s), { message: "must not contain control characters" })
  .openapi({ example: "Test Author" });

export const MediaTypeSchema = z
  .string()
  .max(255, { message: "must be at most 255 characters" })
  .regex(MEDIA_TYPE, { message: "must be a media type per RFC 6838, e.g. image/png" })
  .openapi({ example: "image/png" });

export const ExternalUriSchema = z
  .url({ protocol: /^https?$/, message: "must be an absolute http: or https: URL" })
  .max(2048, { message: "must be at most 2048 characters" })
  .openapi({ example: "https://example.org/logo.png", description: "Where the service downloads the content from." });

// No regex here: a grouped base64 pattern overflows V8's regexp stack on megabytes of input.
export const BinarySchema = z
  .string()
  .min(1, { message: "must not be empty" })
  .refine(isBase64, { message: "must be standard base64" })
  .openapi({
    format: "byte",
    description:
      "The content itself, base64-encoded (at most CMS_MAX_INLINE_BYTES decoded; use uploadResource for large files).",
  });

/** A SHA-256 in hex, as `sha256` in answers; either case. */
export const Sha256HexSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, { message: "must be a SHA-256 in hex (64 characters)" })
  .openapi({
    description:
      "SHA-256 (hex) the content must hash to; otherwise 422 DIGEST_MISMATCH and nothing is stored. An origin's own `Repr-Digest` (sha-256) is checked too.",
    example: "5f8f04f6a3a892aaabbddb6cf273894493773960d4a325b105fee46eef4304f1",
  });

/** sastix/cms clients (Jackson) send absent fields as `null`: null means "not given" everywhere. */
export const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

export interface ContentFields {
  resourceBinary?: string | null;
  resourceExternalURI?: string | null;
}

/** At most one content source; with `required`, exactly one (as field errors). */
const contentFieldsRule =
  (required: boolean) =>
  (value: ContentFields, ctx: z.RefinementCtx): void => {
    const given = (["resourceBinary", "resourceExternalURI"] as const).filter((k) => value[k] != null);
    if (given.length === 2) {
      ctx.addIssue({
        code: "custom",
        path: ["resourceBinary"],
        message: "give resourceBinary or resourceExternalURI, not both",
      });
    } else if (given.length === 0 && required) {
      for (const path of ["resourceBinary", "resourceExternalURI"]) {
        ctx.addIssue({
          code: "custom",
          path: [path],
          message: "one of resourceBinary or resourceExternalURI is required",
        });
      }
    }
  };

/** superRefine arguments: the rule also runs when other fields failed, so every bad field is named at once. */
export const checkContentFields = (required: boolean) =>
  [
    contentFieldsRule(required),
    { when: (payload: { value: unknown }) => typeof payload.value === "object" && payload.value !== null },
  ] as const;

export const CreateResourceRequestSchema = z
  .object({
    resourceAuthor: AuthorSchema,
    resourceExternalURI: optional(ExternalUriSchema),
    resourceBinary: optional(BinarySchema),
    resourceMediaType: optional(MediaTypeSchema).openapi({
      description:
        "Declared type, served as Content-Type. A type ending in `zip` makes the resource a package (explode). Optional: without it, the origin's Content-Type is used (its type/subtype only), checked against the content's signature (magic bytes): a type that has one the bytes lack or contradict gives the bytes' own type. Missing, invalid or application/octet-stream: the bytes' type if they have a signature, else application/octet-stream. A type not declared never makes a package.",
    }),
    resourceName: ResourceNameSchema,
    resourceTenantId: TenantIdSchema,
    expectedSha256: optional(Sha256HexSchema),
    ...DescriptionFields,
  })
  .superRefine(...checkContentFields(true))
  .openapi("CreateResourceRequest", { description: "Exactly one of resourceExternalURI and resourceBinary." });

export type CreateResourceRequest = z.infer<typeof CreateResourceRequestSchema>;

/** A raster image's width and height (resource answers, and updateResource's). */
export const ImageDimensionFields = {
  width: z.number().int().optional().openapi({
    description:
      "A raster image's width in pixels as displayed (EXIF orientation applied), read from its header at ingest; absent for anything else.",
    example: 1200,
  }),
  height: z.number().int().optional().openapi({
    description: "A raster image's height in pixels as displayed; absent for anything else.",
    example: 800,
  }),
};

const ResourceFields = {
  resourceUID: z.string().openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
  author: z.string(),
  resourceURI: z.string().openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png" }),
  versionedURI: z.string().openapi({
    description:
      "The resourceURI with `?v=` and 16 hex digits of the content's SHA-256: getData of it answers these bytes for good (`immutable`), also after updates.",
    example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png?v=9f86d081884c7d65",
  }),
  mediaType: z.string(),
  size: z.number().int(),
  sha256: z.string(),
  ...ImageDimensionFields,
  createdAt: z.string().openapi({ format: "date-time" }),
  ...DescriptionViewFields,
};

export const ResourceItemSchema = z.object({ ...ResourceFields, resourcesList: z.null() }).openapi("ResourceItem");

export const ResourceSchema = z
  .object({
    ...ResourceFields,
    resourcesList: z
      .array(ResourceItemSchema)
      .nullable()
      .openapi({ description: "For a package: its files (createResource: all but the start page). null otherwise." }),
  })
  .openapi("Resource");

export type ResourceView = z.infer<typeof ResourceSchema>;

export const MAX_LINK_SECONDS = 7 * 24 * 3600;

export const CreateDataLinkRequestSchema = z
  .object({
    resourceURI: z.string().max(400).openapi({
      example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png",
      description: "As returned by createResource; a versionedURI (`…?v=<hex>`) makes a link to that version.",
    }),
    expiresIn: z
      .number()
      .int({ message: "must be an integer number of seconds" })
      .min(1, { message: "must be at least 1 second" })
      .max(MAX_LINK_SECONDS, { message: `must be at most ${MAX_LINK_SECONDS} seconds (7 days)` })
      .default(3600)
      .openapi({ description: "Lifetime of the link in seconds (default 3600, at most 7 days)." }),
  })
  .openapi("CreateDataLinkRequest");

export const DataLinkSchema = z
  .object({
    url: z
      .string()
      .openapi({ description: "Absolute getData URL carrying `expires` and `signature`; needs no token." }),
    expires: z.string().openapi({ format: "date-time" }),
  })
  .openapi("DataLink");

export const ResourceUidSchema = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(400, { message: "must be at most 400 characters" })
  .openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" });

/** ResourceQueryDTO: only queryUID is used. */
export const ResourceQueryRequestSchema = z
  .object({
    queryUID: ResourceUidSchema,
    queryResourceName: z.string().nullish().openapi({ description: "Ignored; use listResources to filter." }),
    queryResourceMediaType: z.string().nullish().openapi({ description: "Ignored." }),
    queryResourceAuthor: z.string().nullish().openapi({ description: "Ignored." }),
  })
  .openapi("ResourceQuery");

const utf8 = new TextEncoder();
export const base64url = (text: string) =>
  btoa(String.fromCharCode(...utf8.encode(text)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");

/** Opaque keyset cursor: the (createdAt, uid) of the last row of a page. */
export const encodeCursor = (row: { createdAt: number; uid: string }) =>
  base64url(JSON.stringify([row.createdAt, row.uid]));

const CursorSchema = z
  .string()
  .max(600)
  .transform((text, ctx) => {
    try {
      const bytes = Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
      const [createdAt, uid] = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
      if (Number.isSafeInteger(createdAt) && typeof uid === "string") return { createdAt: createdAt as number, uid };
    } catch {
      // reported below
    }
    ctx.addIssue({ code: "custom", message: "is not a cursor returned by listResources" });
    return z.NEVER;
  })
  .openapi({ type: "string", description: "`nextCursor` of the previous page." });

export const DateTimeSchema = z.iso
  .datetime({ offset: true, message: "must be an ISO-8601 date-time, e.g. 2025-01-31T12:00:00Z" })
  .transform((s) => Date.parse(s))
  .openapi({ type: "string", format: "date-time" });

export const MAX_PAGE_SIZE = 200;

export const ListResourcesQuerySchema = z
  .object({
    resourceTenantId: TenantIdSchema.optional().openapi({
      description: "The tenant to list (required, or its alias `tenant`).",
    }),
    tenant: TenantIdSchema.optional().openapi({ description: "Short alias of `resourceTenantId`." }),
    author: z.string().max(256).optional().openapi({ description: "Exact author." }),
    mediaType: z.string().max(255).optional().openapi({
      description:
        "Media type without parameters, case-insensitive (text/html matches `text/html; charset=utf-8`); `image/*` matches a whole family.",
    }),
    namePrefix: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .openapi({ description: "Case-sensitive prefix of the resource name." }),
    parentUID: z.string().max(400).optional().openapi({ description: "Only the files of this package." }),
    createdFrom: DateTimeSchema.optional().openapi({ description: "Created at or after (inclusive)." }),
    createdBefore: DateTimeSchema.optional().openapi({ description: "Created before (exclusive)." }),
    limit: z.coerce
      .number()
      .int({ message: "must be an integer" })
      .min(1, { message: "must be at least 1" })
      .max(MAX_PAGE_SIZE, { message: `must be at most ${MAX_PAGE_SIZE}` })
      .default(50),
    cursor: CursorSchema.optional(),
    order: z
      .enum(["asc", "desc"], { message: "must be asc or desc" })
      .default("asc")
      .openapi({ description: "`asc` oldest first (the default), `desc` newest first." }),
  })
  // A refinement, not a transform: the query must stay a plain object for the OpenAPI parameters.
  .superRefine((q, ctx) => {
    if (q.resourceTenantId === undefined && q.tenant === undefined) {
      ctx.addIssue({ code: "custom", path: ["resourceTenantId"], message: "is required (or its alias tenant)" });
    } else if (q.resourceTenantId !== undefined && q.tenant !== undefined && q.tenant !== q.resourceTenantId) {
      ctx.addIssue({ code: "custom", path: ["tenant"], message: "must equal resourceTenantId when both are given" });
    }
  });

/** The tenant a valid listResources query names (the refinement above guarantees one). */
export const listedTenant = (q: z.infer<typeof ListResourcesQuerySchema>): string =>
  (q.resourceTenantId ?? q.tenant) as string;

export const ResourcePageSchema = z
  .object({
    resources: z.array(ResourceItemSchema),
    nextCursor: z
      .string()
      .nullable()
      .openapi({ description: "Pass as `cursor` for the next page; null on the last page." }),
  })
  .openapi("ResourcePage");
