/**
 * The tus 1.0 endpoints (https://tus.io/protocols/resumable-upload; core, creation,
 * creation-with-upload, termination, expiration, checksum/sha256), documented for the OpenAPI
 * document. Served by plain handlers (routes/tus/router.ts): bodies are streams and the protocol's
 * answers are header-only.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { problemResponses } from "../../http/problem-handlers.js";
import { API_PREFIX } from "../meta.js";
import { ResourceSchema } from "../resources/schemas.js";
import { BEARER_SECURITY } from "../router.js";

export const TUS_PATH = `${API_PREFIX}/uploads`;

// Examples of required inputs are what Swagger UI's "Try it out" starts with: values that work.
const TusResumable = z
  .literal("1.0.0")
  .openapi({ description: "tus protocol version; required on every request but OPTIONS", example: "1.0.0" });
/** The createResource fields the server needs to make the resource (tenant, name, author), base64. */
const UploadMetadata = z.string().openapi({
  description:
    "Comma-separated `key base64(value)` pairs: `resourceTenantId`, `resourceName` and `resourceAuthor` are required (the example: zaq12345, hello.txt, Test Author, text/plain).",
  example: `resourceTenantId ${btoa("zaq12345")},resourceName ${btoa("hello.txt")},resourceAuthor ${btoa("Test Author")},resourceMediaType ${btoa("text/plain")}`,
});
const UploadId = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .openapi({ description: "The upload's id (from Location)" }),
});
const tag = "resources";
const offsetHeaders = z.object({
  "Upload-Offset": z.string(),
  "Upload-Expires": z.string(),
  "Tus-Resumable": z.string(),
});

export const tusOptions = createRoute({
  method: "options",
  path: TUS_PATH,
  operationId: "tusOptions",
  tags: [tag],
  // Capability discovery is open by the protocol.
  security: [],
  summary:
    "tus capabilities: Tus-Version, Tus-Extension, Tus-Max-Size (CMS_MAX_RESOURCE_BYTES), Tus-Checksum-Algorithm",
  responses: { 204: { description: "Capabilities in the header fields" } },
});

export const tusCreate = createRoute({
  method: "post",
  path: TUS_PATH,
  operationId: "tusCreateUpload",
  tags: [tag],
  summary: "Start a resumable upload (creation, creation-with-upload)",
  description:
    "Upload-Length is required (no deferred length). Upload-Metadata carries the createResource fields, base64-encoded: `resourceTenantId` (or `tenant`), `resourceName` (or `filename`), `resourceMediaType` (declared, stored as given) or `filetype` / `type` (what tus-js-client and Uppy send: checked against the bytes' signature as createResource checks an origin's type; without either, the bytes' type, else application/octet-stream; only a zip type given here makes a package), `resourceAuthor` (or `author`), and optionally `expectedSha256`. A body of type application/offset+octet-stream is the first bytes. The upload expires CMS_TUS_EXPIRY_SECONDS after its last PATCH. A **new version** of an existing resource (any size, where updateResource takes inline content only): `resourceUID`, `lockID` and `resourceAuthor` (or `author`: the lock's owner, as updateResource's `author`), optionally `resourceMediaType`; tenant, name and `filetype` are the resource's and ignored, `expectedSha256` is refused. The caller's lock must be live when the upload is created and when its last byte arrives (renew it meanwhile); the content is then replaced under updateResource's rules (a new revision; not a package), and the last PATCH answers the updated resource. Only the lock's holder continues such an upload.",
  security: BEARER_SECURITY,
  request: {
    headers: z.object({
      "tus-resumable": TusResumable,
      "upload-length": z.string().regex(/^\d+$/),
      "upload-metadata": UploadMetadata,
    }),
  },
  responses: {
    201: {
      description: "Created; `Location` is the upload's URL",
      headers: offsetHeaders.extend({ Location: z.string() }),
    },
    ...problemResponses(400, 401, 403, 404, 409, 412, 413, 423, 507),
  },
});

export const tusHead = createRoute({
  method: "head",
  path: `${TUS_PATH}/{id}`,
  operationId: "tusUploadOffset",
  tags: [tag],
  summary: "How many bytes of the upload arrived (Upload-Offset) out of Upload-Length",
  security: BEARER_SECURITY,
  request: { params: UploadId, headers: z.object({ "tus-resumable": TusResumable }) },
  responses: {
    200: {
      description:
        "Upload-Offset, Upload-Length, Upload-Metadata, Upload-Expires; Cache-Control: no-store. A finished upload also names the resource it became: Location and Link (rel related) are its getData URL",
      headers: offsetHeaders,
    },
    ...problemResponses(401, 403, 404, 412),
  },
});

export const tusPatch = createRoute({
  method: "patch",
  path: `${TUS_PATH}/{id}`,
  operationId: "tusAppend",
  tags: [tag],
  summary: "Append bytes at Upload-Offset; the last bytes turn the upload into a resource",
  description:
    "Bytes that arrive before a connection drops are kept (unless Upload-Checksum was sent: then the body must arrive whole and hash to it, or 460 keeps none of it). When the upload is complete the answer is 201 with the created resource (as createResource: dedupe, zip packages, digests); otherwise 204.",
  security: BEARER_SECURITY,
  request: {
    params: UploadId,
    headers: z.object({
      "tus-resumable": TusResumable,
      "upload-offset": z
        .string()
        .regex(/^\d+$/)
        .openapi({ description: "Where these bytes go: the offset a HEAD answered (0 at first)", example: "0" }),
      "upload-checksum": z.string().optional(),
    }),
    body: {
      required: true,
      content: { "application/offset+octet-stream": { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  responses: {
    201: {
      description: "The upload is complete and became this resource",
      headers: offsetHeaders.extend({ Location: z.string() }),
      content: { "application/json": { schema: ResourceSchema } },
    },
    204: { description: "Stored; Upload-Offset is the new offset", headers: offsetHeaders },
    ...problemResponses(400, 401, 403, 404, 409, 412, 413, 415, 422, 423, 507),
    460: { description: "Checksum mismatch (tus checksum extension)" },
  },
});

export const tusDelete = createRoute({
  method: "delete",
  path: `${TUS_PATH}/{id}`,
  operationId: "tusTerminate",
  tags: [tag],
  summary: "Abandon an upload (termination): its stored bytes are removed",
  security: BEARER_SECURITY,
  request: { params: UploadId, headers: z.object({ "tus-resumable": TusResumable }) },
  responses: { 204: { description: "Terminated" }, ...problemResponses(401, 403, 404, 409, 412) },
});

export const TUS_ROUTES = [tusOptions, tusCreate, tusHead, tusPatch, tusDelete];
