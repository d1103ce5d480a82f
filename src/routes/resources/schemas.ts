/** zod schemas for the resource endpoints. Types are inferred from these, never written twice. */
import { z } from "@hono/zod-openapi";

// C0 controls, DEL and C1 controls never belong in names, authors or anything echoed into headers.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;
const utf8Length = (s: string) => new TextEncoder().encode(s).length;

/** RFC 6838 §4.2 restricted-name, with optional RFC 9110 §5.6.6 parameters (token=token|quoted-string). */
const RESTRICTED_NAME = "[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}";
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
  .refine((s) => !CONTROL_CHARS.test(s), { message: "must not contain control characters or NUL" })
  .refine((s) => s !== "." && s !== "..", { message: "must not be '.' or '..'" })
  .openapi({ example: "logo.png", description: "A file name (no path separators), at most 255 bytes of UTF-8." });

export const CreateResourceRequestSchema = z
  .object({
    resourceAuthor: z
      .string()
      .min(1, { message: "must not be empty" })
      .max(256, { message: "must be at most 256 characters" })
      .refine((s) => !CONTROL_CHARS.test(s), { message: "must not contain control characters" })
      .openapi({ example: "Test Author" }),
    resourceExternalURI: z
      .url({ protocol: /^https?$/, message: "must be an absolute http: or https: URL" })
      .max(2048, { message: "must be at most 2048 characters" })
      .openapi({ example: "https://example.org/logo.png", description: "Where the service downloads the content from." }),
    resourceMediaType: z
      .string()
      .max(255, { message: "must be at most 255 characters" })
      .regex(MEDIA_TYPE, { message: "must be a media type per RFC 6838, e.g. image/png" })
      .openapi({ example: "image/png" }),
    resourceName: ResourceNameSchema,
    resourceTenantId: TenantIdSchema,
  })
  .openapi("CreateResourceRequest");

export type CreateResourceRequest = z.infer<typeof CreateResourceRequestSchema>;

export const ResourceSchema = z
  .object({
    resourceUID: z.string().openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
    author: z.string(),
    resourceURI: z.string().openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png" }),
    resourcesList: z.array(z.unknown()).nullable().openapi({ description: "Children of a package; null otherwise." }),
    mediaType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Resource");

export type ResourceView = z.infer<typeof ResourceSchema>;

export const GetDataParamsSchema = z.object({
  resourceUID: z.string().openapi({ param: { name: "resourceUID", in: "path" }, example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
  resourceName: z.string().openapi({ param: { name: "resourceName", in: "path" }, example: "logo.png" }),
});

export const MAX_LINK_SECONDS = 7 * 24 * 3600;

export const CreateDataLinkRequestSchema = z
  .object({
    resourceURI: z
      .string()
      .max(400)
      .openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345/logo.png", description: "As returned by createResource." }),
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
    url: z.string().openapi({ description: "Absolute getData URL carrying `expires` and `signature`; needs no token." }),
    expires: z.string().openapi({ format: "date-time" }),
  })
  .openapi("DataLink");
