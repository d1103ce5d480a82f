/**
 * The streaming upload: multipart/form-data with the createResource metadata fields and the file, in
 * any order. Documented here but served by a plain handler (routes/uploads/router.ts), because
 * zod-openapi's form validator would read the whole body into memory.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { BEARER_SECURITY } from "../router.js";
import {
  AuthorSchema,
  MediaTypeSchema,
  optional,
  ResourceNameSchema,
  ResourceSchema,
  Sha256HexSchema,
  TenantIdSchema,
} from "../resources/schemas.js";
import { TextDescriptionFields } from "../resources/description-schemas.js";

/** The metadata fields, validated once the file part arrives (the name defaults to the file part's). */
export const UploadFieldsSchema = z.object({
  resourceAuthor: AuthorSchema,
  resourceMediaType: optional(MediaTypeSchema),
  resourceName: ResourceNameSchema,
  resourceTenantId: TenantIdSchema,
  expectedSha256: optional(Sha256HexSchema),
  ...TextDescriptionFields,
});

/** The fields that may be repeated (one tag per field). */
export const REPEATABLE_FIELDS: readonly string[] = ["tags"];

export const UPLOAD_FIELDS = Object.keys(UploadFieldsSchema.shape);

export const uploadResource = createRoute({
  method: "post",
  path: `${API_PREFIX}/uploadResource`,
  operationId: "uploadResource",
  tags: ["resources"],
  summary: "Register a resource from a streamed multipart/form-data upload (large files)",
  description:
    "Send the fields and the `file` part in any order (fields first is best: a file sent before its fields is staged in storage until they arrive); the file is streamed to storage (never held in memory) and counted against CMS_MAX_RESOURCE_BYTES. resourceName defaults to the file name. resourceMediaType, when given, is stored as declared; without it the file part's Content-Type (its type/subtype) is checked against the bytes' signature (magic bytes) as they stream by: a type that has a signature the bytes lack or contradict gives the bytes' own type; a type without one (text, HTML, SVG, JSON) is kept; no Content-Type or application/octet-stream (what curl -F and many clients send) gives the bytes' type if they have a signature, else application/octet-stream. With the fields first, parts after the file are ignored. A zip is exploded into a package only when resourceMediaType or the part's Content-Type says zip; a zip sent as application/octet-stream is stored as application/zip, unexploded. The file's SHA-256 may be announced by the `expectedSha256` field or by a `Repr-Digest` / `Content-Digest` header (RFC 9530, sha-256) on the file part itself; a mismatch is 422 DIGEST_MISMATCH and nothing is stored.",
  security: BEARER_SECURITY,
  request: {
    body: {
      required: true,
      content: {
        "multipart/form-data": {
          schema: UploadFieldsSchema.partial({ resourceName: true }).extend({
            resourceMediaType: UploadFieldsSchema.shape.resourceMediaType.openapi({
              description:
                "Declared type, stored as given. Optional: without it, the file part's Content-Type checked against the bytes, or the bytes' own type.",
            }),
            file: z.string().openapi({ format: "binary" }),
          }),
        },
      },
    },
  },
  responses: {
    201: {
      description: "Created; `Location` is the content's getData URL",
      headers: z.object({ Location: z.string() }),
      content: { "application/json": { schema: ResourceSchema } },
    },
    ...problemResponses(400, 401, 403, 413, 415, 422, 503, 507),
  },
});
