/** zod schemas for reading content: the URI path parameters and DataDTO. */
import { z } from "@hono/zod-openapi";

export const UriParamsSchema = z.object({
  context: z.string().openapi({
    param: { name: "context", in: "path" },
    description: "First segment of the resourceURI: the resource's UID, or its package's UID.",
    example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345",
  }),
  path: z.string().openapi({
    param: { name: "path", in: "path" },
    description: "The rest of the resourceURI; may span several segments (`images/logo.png`) for files of a package.",
    example: "logo.png",
  }),
});

const header = (name: string, description: string, example: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "header" }, description, example });

/** The RFC 9110 request headers getData honours; documented so generated clients can send them. */
export const ContentRequestHeadersSchema = z.object({
  Range: header(
    "Range",
    "One or more byte ranges (RFC 9110 §14.2): `bytes=0-99`, `bytes=-500`, `bytes=100-`, `bytes=0-1,4-5`.",
    "bytes=0-99",
  ),
  "If-Range": header(
    "If-Range",
    "Send the range only if the representation is still this ETag (or unmodified since this date); else 200 with all of it.",
    '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
  ),
  "If-None-Match": header(
    "If-None-Match",
    "304 when the ETag matches (a cached copy is current).",
    '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
  ),
  "If-Modified-Since": header(
    "If-Modified-Since",
    "304 when not modified since this date (ignored with If-None-Match).",
    "Mon, 23 Nov 2026 10:00:00 GMT",
  ),
  "If-Match": header(
    "If-Match",
    "412 unless the ETag matches.",
    '"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
  ),
  "If-Unmodified-Since": header(
    "If-Unmodified-Since",
    "412 when modified since this date (ignored with If-Match).",
    "Mon, 23 Nov 2026 10:00:00 GMT",
  ),
});

/** A signed link's query (createDataLink): both or neither; checked before anything else. */
export const SignedLinkQuerySchema = z.object({
  expires: z
    .string()
    .optional()
    .openapi({
      param: { name: "expires", in: "query" },
      description: "Signed link: expiry, epoch seconds.",
      example: "1795000000",
    }),
  signature: z
    .string()
    .optional()
    .openapi({
      param: { name: "signature", in: "query" },
      description: "Signed link: HMAC of method, path and expires (base64url).",
      example: "q1X0…",
    }),
});

/** getData's query: a signed link's fields, and `v` for a content-versioned (immutable) URL. */
export const VersionedQuerySchema = SignedLinkQuerySchema.extend({
  v: z
    .string()
    .regex(/^[0-9a-fA-F]{16,64}$/)
    .optional()
    .openapi({
      param: { name: "v", in: "query" },
      description:
        "Content version: the SHA-256 of the content (hex), whole or a prefix of at least 16 digits, as in `versionedURI`. Naming the current content or an earlier revision's, the answer is that content with `Cache-Control: …, max-age=31536000, immutable`; a version no revision had is 404 `VERSION_NOT_FOUND`; a malformed one 400. A signed link made for a versioned URL signs `v` too.",
      example: "9f86d081884c7d65",
    }),
});

export const UidParamsSchema = z.object({
  resourceUID: z
    .string()
    .openapi({ param: { name: "resourceUID", in: "path" }, example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
});

export const DataRequestSchema = z
  .object({
    resourceUID: z.string().max(400).nullish(),
    resourceURI: z.string().max(2048).nullish(),
  })
  .superRefine((value, ctx) => {
    if (!value.resourceUID && !value.resourceURI) {
      for (const path of ["resourceUID", "resourceURI"])
        ctx.addIssue({ code: "custom", path: [path], message: "one of resourceUID or resourceURI is required" });
    }
  })
  .openapi("DataDTO", { description: "resourceUID wins when both are given." });

/** getData's image parameters (issue 30; parsed by images/params.ts, which the route calls). */
const imageParam = (name: string, description: string, example: string, values?: readonly string[]) =>
  (values ? z.enum(values as [string, ...string[]]) : z.string())
    .optional()
    .openapi({ param: { name, in: "query" }, description, example });

export const ImageQuerySchema = VersionedQuerySchema.extend({
  width: imageParam(
    "width",
    "Image derivative: width in pixels, 1…CMS_IMAGE_MAX_DIMENSION (6000). Alone, keeps the aspect ratio.",
    "320",
  ),
  height: imageParam(
    "height",
    "Image derivative: height in pixels, 1…CMS_IMAGE_MAX_DIMENSION. With width and no fit: cover.",
    "240",
  ),
  fit: imageParam("fit", "Image derivative: how the image fits width × height.", "cover", [
    "cover",
    "contain",
    "inside",
    "outside",
    "fill",
  ]),
  format: imageParam(
    "format",
    "Image derivative: output format; `auto` (the default) picks AVIF or WebP from Accept (the higher q-value; q=0 refuses), else the source's, and the answer carries `Vary: Accept`.",
    "webp",
    ["auto", "webp", "avif", "jpeg", "png"],
  ),
  quality: imageParam("quality", "Image derivative: encoder quality 1…100.", "80"),
  enlarge: imageParam(
    "enlarge",
    "Image derivative: `true` lets it outgrow the source (at most CMS_IMAGE_MAX_PIXELS pixels, else 422 IMAGE_TOO_LARGE); by default it never does.",
    "false",
    ["true", "false"],
  ),
  preset: imageParam(
    "preset",
    "Image derivative: a named preset of CMS_IMAGE_PRESETS (with CMS_IMAGE_PRESETS_ONLY, the only parameter accepted; on a signed link, the only one too: others are 403).",
    "thumb",
  ),
});
