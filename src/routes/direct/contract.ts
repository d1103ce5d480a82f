/** Route definitions for uploads straight to storage (docs/direct-storage.md). No logic here. */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { jsonPost } from "../router.js";
import { ResourceSchema, Sha256HexSchema } from "../resources/schemas.js";
import { UploadFieldsSchema } from "../uploads/contract.js";

/** Where a URL the service hosts itself takes the bytes (fs and memory stores, R2 without access keys). */
export const DIRECT_PUT_PATH = `${API_PREFIX}/directUploads`;

const UploadIdSchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, { message: "must be an upload id from createUploadURL" })
  .openapi({ example: "0123456789abcdef0123456789abcdef" });

/** uploadResource's fields (the announced type is checked against the bytes at completion), the size and the hash. */
export const CreateUploadUrlRequestSchema = UploadFieldsSchema.omit({ expectedSha256: true })
  .extend({
    size: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .openapi({ description: "Exact byte count of the content.", example: 12 }),
    sha256: Sha256HexSchema.openapi({ description: "SHA-256 (hex) of the content: the URL stores nothing else." }),
  })
  .openapi("CreateUploadUrlRequest");

export const UploadTicketSchema = z
  .object({
    uploadId: z.string(),
    method: z
      .enum(["PUT"])
      .nullable()
      .openapi({ description: "null: the tenant already stores this content; send nothing, complete at once." }),
    url: z.string().nullable(),
    headers: z
      .record(z.string(), z.string())
      .openapi({ description: "Send every one with the bytes (Content-Length is signed too)." }),
    expiresAt: z.string(),
  })
  .openapi("UploadTicket");

export const CompleteUploadRequestSchema = z.object({ uploadId: UploadIdSchema }).openapi("CompleteUploadRequest");

export const createUploadURL = jsonPost({
  verb: "createUploadURL",
  tag: "resources",
  summary: "A signed URL to send a resource's bytes straight to storage (S3/R2), or to the service on other stores",
  description:
    "The client sends exactly `size` bytes with `method` to `url` with every header in `headers` before `expiresAt` (CMS_UPLOAD_URL_TTL_SECONDS), then calls completeUpload. The tenant's quota holds `size` until then. `method: null`: the tenant already stores this content, nothing is sent.",
  body: CreateUploadUrlRequestSchema,
  ok: { status: 201, description: "The upload URL", schema: UploadTicketSchema },
  errors: [401, 403, 413, 507],
});

export const completeUpload = jsonPost({
  verb: "completeUpload",
  tag: "resources",
  summary: "Make a finished direct upload a resource",
  description:
    "The stored object must be exactly the declared size and SHA-256 (checked by the bucket where it refuses a wrong signed hash, otherwise read once by the service): else 422 SIZE_MISMATCH / DIGEST_MISMATCH and nothing is kept. 409 UPLOAD_INCOMPLETE before the bytes arrived, 409 once completed; 404 unknown or expired. Only the upload's creator or an admin.",
  body: CompleteUploadRequestSchema,
  ok: { status: 201, description: "Created", schema: ResourceSchema },
  errors: [401, 403, 404, 409, 422, 503, 507],
});

export const directPut = createRoute({
  method: "put",
  path: `${DIRECT_PUT_PATH}/{uploadId}`,
  operationId: "directUploadPut",
  tags: ["resources"],
  summary: "The bytes of a direct upload whose URL the service hosts (the URL's token authorises it)",
  security: [],
  request: {
    params: z.object({ uploadId: UploadIdSchema }),
    query: z.object({ token: z.string().regex(/^[0-9a-f]{64}$/) }),
  },
  responses: {
    204: { description: "Stored: exactly the declared size and SHA-256" },
    ...problemResponses(400, 404, 409, 422),
  },
});
