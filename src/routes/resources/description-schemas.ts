/**
 * The fields people describe and find a resource by (issue 38): title, description, altText, tags,
 * folder and metadata, with the limits. One definition for every way in (createResource,
 * uploadResource, tus Upload-Metadata, updateResourceMetadata) and for the answers.
 */
import { z } from "@hono/zod-openapi";
import { hasBidiControl, hasControlChar } from "../../lib/name-chars.js";
import { tagKey } from "../../services/descriptions.js";

/** Characters as people count them (code points), not UTF-16 units. */
const length = (s: string) => [...s].length;
/** C0/C1 controls but the line breaks and tab a paragraph may hold. */
const hasControlBesidesBreaks = (s: string) => hasControlChar(s.replace(/[\t\n\r]/g, ""));

const text = (max: number, breaks: boolean) =>
  z
    .string()
    .refine((s) => length(s) <= max, { message: `must be at most ${max} characters` })
    .refine((s) => !(breaks ? hasControlBesidesBreaks(s) : hasControlChar(s)), {
      message: breaks
        ? "must not contain control characters other than tab and line breaks"
        : "must not contain control characters",
    });

export const TitleSchema = text(200, false).openapi({ example: "Company logo" });
export const DescriptionSchema = text(2000, true).openapi({ example: "The logo on a white background." });
export const AltTextSchema = text(1000, true).openapi({ example: "A blue sun rising over the letters ACME" });

export const MAX_TAGS = 32;
export const TagSchema = z
  .string()
  .refine((s) => length(s) >= 1 && length(s) <= 64, { message: "must be 1 to 64 characters" })
  .refine((s) => !hasControlChar(s) && !hasBidiControl(s), { message: "must not contain control characters" })
  .openapi({ example: "brand" });

export const TagsSchema = z
  .array(TagSchema)
  .max(MAX_TAGS, { message: `must hold at most ${MAX_TAGS} tags` })
  .refine((tags) => new Set(tags.map(tagKey)).size === tags.length, {
    message: "must hold distinct tags (compared case-insensitively)",
  })
  .openapi({ example: ["brand", "logo"], description: "Distinct tags; matched case-insensitively." });

export const MAX_FOLDER_LENGTH = 255;
export const FolderSchema = z
  .string()
  .max(MAX_FOLDER_LENGTH, { message: `must be at most ${MAX_FOLDER_LENGTH} characters` })
  .refine((s) => s.startsWith("/") && s.endsWith("/"), { message: "must start and end with '/'" })
  .refine(
    (s) =>
      s === "/" ||
      s
        .slice(1, -1)
        .split("/")
        .every((seg) => seg !== "" && seg !== "." && seg !== ".."),
    {
      message: "must not have an empty, '.' or '..' segment",
    },
  )
  .refine((s) => !hasControlChar(s) && !hasBidiControl(s) && !s.includes("\\"), {
    message: "must not contain control characters or '\\'",
  })
  .openapi({ example: "/brand/logos/", description: "A `/`-separated path starting and ending with `/`." });

export const MAX_METADATA_BYTES = 16 * 1024;
const utf8Length = (s: string) => new TextEncoder().encode(s).length;

export const MetadataSchema = z
  .record(z.string(), z.unknown())
  .refine((m) => utf8Length(JSON.stringify(m)) <= MAX_METADATA_BYTES, {
    message: `must be at most ${MAX_METADATA_BYTES} bytes serialised as JSON`,
  })
  .openapi({ example: { campaign: "spring" }, description: "Your own keys; at most 16 KiB as JSON." });

export type Metadata = z.infer<typeof MetadataSchema>;

/** The six fields as a create gives them (null = not given, as everywhere in createResource). */
export const DescriptionFields = {
  title: TitleSchema.nullish(),
  description: DescriptionSchema.nullish(),
  altText: AltTextSchema.nullish(),
  tags: TagsSchema.nullish(),
  folder: FolderSchema.nullish(),
  metadata: MetadataSchema.nullish(),
};

export const DESCRIPTION_FIELDS = ["title", "description", "altText", "tags", "folder", "metadata"] as const;

export type Description = {
  title?: string | null;
  description?: string | null;
  altText?: string | null;
  tags?: string[] | null;
  folder?: string | null;
  metadata?: Metadata | null;
};

/** How the fields appear in every resource answer. */
export const DescriptionViewFields = {
  title: z.string().nullable().openapi({ description: "At most 200 characters; null when unset." }),
  description: z.string().nullable().openapi({ description: "At most 2000 characters; null when unset." }),
  altText: z.string().nullable().openapi({ description: "At most 1000 characters; null when unset." }),
  tags: z.array(z.string()).openapi({ description: "Distinct tags (matched case-insensitively); [] when none." }),
  folder: z.string().openapi({ description: "The resource's folder; `/` when unset.", example: "/brand/" }),
  metadata: z.record(z.string(), z.unknown()).openapi({ description: "Your own keys; {} when none." }),
  metadataVersion: z.string().openapi({
    description:
      "Opaque; changes whenever title, description, altText, tags, folder or metadata change. Send it as `If-Match` to updateResourceMetadata.",
    example: "1",
  }),
  thumbhash: z.string().optional().openapi({
    description:
      "An image's placeholder (ThumbHash, base64), computed once at ingest, to paint before the image arrives; absent for anything else.",
  }),
};

/** A JSON text as its value; text that is no JSON stays text, for the schema after it to refuse. */
const parsedJson = (v: unknown) => {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
};

/**
 * `tags` sent as text (multipart fields, tus Upload-Metadata): one JSON array, or (multipart) one
 * tag per repeated field. A single field holding `[…]` is read as the array.
 */
const tagsFromText = (v: unknown) => {
  const values = Array.isArray(v) ? v : [v];
  const [only] = values;
  if (values.length === 1 && typeof only === "string" && only.trimStart().startsWith("[")) return parsedJson(only);
  return values;
};

/** The six fields as text fields (uploadResource's multipart fields, tus Upload-Metadata keys). */
export const TextDescriptionFields = {
  title: TitleSchema.optional(),
  description: DescriptionSchema.optional(),
  altText: AltTextSchema.optional(),
  folder: FolderSchema.optional(),
  tags: z.preprocess(tagsFromText, TagsSchema).optional().openapi({
    type: "string",
    example: '["brand", "logo"]',
    description: "A JSON array of tags, or (multipart) one tag per repeated field.",
  }),
  metadata: z.preprocess(parsedJson, MetadataSchema).optional().openapi({
    type: "string",
    example: '{"campaign": "spring"}',
    description: "A JSON object (your own keys), as text; at most 16 KiB.",
  }),
};
