/** tus 1.0 over the app's Fetch primitives: header checks and answers here, the rules in services/tus-uploads. */
import type { Context, MiddlewareHandler } from "hono";
import type { Guards } from "../../auth/guards.js";
import type { AppEnv } from "../../http/app-env.js";
import { ProblemError } from "../../problems.js";
import { toFieldErrors } from "../../http/problem-handlers.js";
import { requestDigests } from "../../http/request-digests.js";
import { formatHttpDate } from "../../http/http-date.js";
import { fromHex, toHex } from "../../lib/sha256.js";
import {
  integerHeader,
  parseUploadChecksum,
  parseUploadMetadata,
  TUS_CHECKSUM_ALGORITHMS,
  TUS_CONTENT_TYPE,
  TUS_EXTENSIONS,
  TUS_VERSION,
} from "../../http/tus-headers.js";
import type { TusUploadRow } from "../../metadata/schema.js";
import { METADATA_POINTER, type TusFields, type TusTarget, type TusUploadService } from "../../services/tus-uploads.js";
import { dataPath } from "../../api-paths.js";
import { toResourceView } from "../resources/views.js";
import { createRouter, type RouteGroup } from "../router.js";
import { z } from "@hono/zod-openapi";
import { AuthorSchema, MediaTypeSchema, optional, ResourceUidSchema } from "../resources/schemas.js";
import { UploadFieldsSchema } from "../uploads/contract.js";
import { TUS_PATH, TUS_ROUTES } from "./contract.js";

/**
 * Upload-Metadata keys → createResource fields; Uppy's and tus-js-client's usual names are aliases.
 * Their `filetype` (or `type`) is the browser's guess from the file's name, so it stays the uploader's
 * type, checked against the bytes; only `resourceMediaType` declares one. A Map: a client's key such
 * as `toString` must not find Object.prototype's.
 */
const METADATA_KEYS = new Map<string, keyof TusFields | keyof NewVersionFields>([
  ["resourceTenantId", "resourceTenantId"],
  ["tenant", "resourceTenantId"],
  ["resourceName", "resourceName"],
  ["filename", "resourceName"],
  ["name", "resourceName"],
  ["resourceMediaType", "resourceMediaType"],
  ["filetype", "filetype"],
  ["type", "filetype"],
  ["resourceAuthor", "resourceAuthor"],
  ["author", "resourceAuthor"],
  ["expectedSha256", "expectedSha256"],
  ["resourceUID", "resourceUID"],
  ["lockID", "lockID"],
  // Issue 38's descriptive fields; tags and metadata as JSON texts.
  ["title", "title"],
  ["description", "description"],
  ["altText", "altText"],
  ["folder", "folder"],
  ["tags", "tags"],
  ["metadata", "metadata"],
]);

const TusFieldsSchema = UploadFieldsSchema.extend({ filetype: optional(MediaTypeSchema) });

/**
 * A new version (`resourceUID` given): updateResource's lock proof, `resourceAuthor` (or `author`)
 * being the lock's owner as updateResource's `author`. The name, tenant and uploader's type a
 * client library adds on its own are the resource's already and are ignored; a digest cannot be
 * checked on this path, so it is refused rather than ignored.
 */
const NewVersionSchema = z.object({
  resourceUID: ResourceUidSchema,
  lockID: z.string().min(1, { message: "must not be empty" }).max(200),
  resourceAuthor: AuthorSchema,
  resourceMediaType: optional(MediaTypeSchema),
  expectedSha256: z.never({ message: "is not supported for a new version" }).optional(),
});
type NewVersionFields = z.infer<typeof NewVersionSchema>;

function metadataFields(header: string | undefined): TusTarget {
  const fields: Record<string, string> = {};
  for (const [key, value] of parseUploadMetadata(header)) {
    const field = METADATA_KEYS.get(key);
    if (field) fields[field] = value; // other keys (Uppy adds its own) are ignored
  }
  if (fields.resourceUID !== undefined) {
    const { resourceUID, lockID, resourceAuthor, resourceMediaType } = valid(NewVersionSchema, fields);
    return { newVersion: { resourceUID, lockID, author: resourceAuthor, resourceMediaType } };
  }
  return valid(TusFieldsSchema, fields);
}

function valid<S extends z.ZodType>(schema: S, fields: Record<string, string>): z.infer<S> {
  const parsed = schema.safeParse(fields);
  if (!parsed.success) {
    // Pointers name the metadata key under the header (toFieldErrors would escape the header's "/").
    const errors = toFieldErrors(parsed.error, "metadata").map((e) => ({
      ...e,
      pointer: e.pointer.replace(/^\/metadata/, METADATA_POINTER),
    }));
    throw new ProblemError(
      "VALIDATION_FAILED",
      `invalid Upload-Metadata: ${errors.map((e) => e.pointer.split("/").at(-1)).join(", ")}`,
      { errors },
    );
  }
  return parsed.data;
}

const uploadHeaders = (row: TusUploadRow): Record<string, string> => ({
  "upload-offset": String(row.offset),
  "upload-length": String(row.length),
  "upload-expires": formatHttpDate(new Date(row.expiresAt)),
  "cache-control": "no-store",
});

function requireOffsetType(c: Context<AppEnv>): void {
  const type = (c.req.header("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== TUS_CONTENT_TYPE)
    throw new ProblemError("UNSUPPORTED_MEDIA_TYPE", `upload bytes as ${TUS_CONTENT_TYPE}`);
}

function requireOffsetStream(c: Context<AppEnv>): ReadableStream<Uint8Array> {
  requireOffsetType(c);
  return c.req.raw.body ?? new ReadableStream({ start: (controller) => controller.close() });
}

/**
 * The SHA-256 this PATCH body must hash to: its Upload-Checksum (tus checksum extension) or its own
 * Content-Digest / Repr-Digest (RFC 9530), which say the same of the same bytes; if both are sent,
 * they must agree. A mismatch is then the extension's 460, whichever announced it.
 */
function patchChecksum(c: Context<AppEnv>): Uint8Array | undefined {
  const checksum = parseUploadChecksum(c.req.header("upload-checksum"));
  const announced = [
    ...(checksum ? [{ header: "upload-checksum", hex: toHex(checksum) }] : []),
    ...requestDigests((name) => c.req.header(name)),
  ];
  const [first, ...others] = announced;
  const disagreeing = others.find((other) => other.hex !== first?.hex);
  if (disagreeing) {
    const detail = "announces another sha-256 than the other digest fields of this PATCH";
    throw new ProblemError("VALIDATION_FAILED", `invalid ${disagreeing.header}: ${detail}`, {
      errors: [{ pointer: `/header/${disagreeing.header}`, detail }],
    });
  }
  return first && fromHex(first.hex);
}

export function createTusRouter({
  tus,
  guards,
  maxBytes,
}: {
  tus: TusUploadService;
  guards: Guards;
  maxBytes: number;
}): RouteGroup {
  const router = createRouter();
  for (const route of TUS_ROUTES) router.openAPIRegistry.registerPath(route);
  const creator = guards.role("creator");

  // Every answer says which protocol it speaks; every request but OPTIONS must speak 1.0.0 (§Tus-Resumable).
  const protocol: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (c.req.method !== "OPTIONS") {
      if (c.req.header("tus-resumable") !== TUS_VERSION) {
        throw new ProblemError("PRECONDITION_FAILED", `Tus-Resumable must be ${TUS_VERSION}`, {
          headers: { "tus-version": TUS_VERSION, "tus-resumable": TUS_VERSION },
        });
      }
      await creator(c, next);
    } else {
      await next();
    }
    c.res.headers.set("tus-resumable", TUS_VERSION);
  };
  router.use(TUS_PATH, protocol);
  router.use(`${TUS_PATH}/*`, protocol);

  const capabilities = (c: Context<AppEnv>) =>
    c.body(null, 204, {
      "tus-version": TUS_VERSION,
      "tus-extension": TUS_EXTENSIONS,
      "tus-max-size": String(maxBytes),
      "tus-checksum-algorithm": TUS_CHECKSUM_ALGORITHMS,
    });
  router.options(TUS_PATH, capabilities);
  router.options(`${TUS_PATH}/:id`, capabilities);

  /** Appends, and answers 201 with the resource once the upload is complete, else 204 with the offset. */
  async function appendAndAnswer(
    c: Context<AppEnv>,
    row: TusUploadRow,
    offset: number,
    status: 201 | 204,
    extra: Record<string, string> = {},
  ) {
    const checksum = patchChecksum(c);
    let current = await tus.append(row, offset, requireOffsetStream(c), checksum);
    if (current.offset === current.length && current.state === "pending") {
      const created = await tus.finish(current, c.get("principal"));
      current = { ...current, resourceUid: created.primary.uid };
      return c.json(toResourceView(created.primary, created.files), 201, {
        ...uploadHeaders(current),
        ...extra,
        // A finished upload's own URL no longer matters; the resource's does (as createResource).
        ...(status === 204
          ? { location: dataPath(created.primary) }
          : { "content-location": dataPath(created.primary) }),
      });
    }
    return c.body(null, status, { ...uploadHeaders(current), ...extra });
  }

  router.post(TUS_PATH, async (c) => {
    if (c.req.header("upload-defer-length") !== undefined) {
      throw new ProblemError("VALIDATION_FAILED", "deferred lengths are not supported: send Upload-Length", {
        errors: [{ pointer: "/header/upload-defer-length", detail: "not supported (no creation-defer-length)" }],
      });
    }
    const length = integerHeader("upload-length", c.req.header("upload-length"));
    if (length === undefined) {
      throw new ProblemError("VALIDATION_FAILED", "Upload-Length is required", {
        errors: [{ pointer: "/header/upload-length", detail: "required" }],
      });
    }
    const fields = metadataFields(c.req.header("upload-metadata"));
    // creation-with-upload: the same request may carry the first bytes.
    const withBytes = c.req.header("content-type") !== undefined && c.req.raw.body !== null;
    // Whatever needs no body is checked before the upload exists: its type, and its digest fields
    // (malformed ones are 400 with or without a body, as on every endpoint).
    if (withBytes) requireOffsetType(c);
    patchChecksum(c);
    const row = await tus.create(fields, length, c.get("principal"));
    const location = { location: `${TUS_PATH}/${row.id}` };
    if (!withBytes && length !== 0) return c.body(null, 201, { ...uploadHeaders(row), ...location });
    try {
      return await appendAndAnswer(c, row, 0, 201, location);
    } catch (err) {
      // A refused first body (460, 413…) or a failure: the client never learnt this upload's URL, so
      // nobody could resume it. Best effort: if even this fails, the upload expires as any other.
      await tus.terminate(row).catch(() => {});
      throw err;
    }
  });

  // HEAD: Hono answers HEAD with the GET handler, body dropped. A finished upload names its resource
  // as the 201 did (Location, which tus clients read off their last response) and as a Link (RFC 8288).
  router.get(`${TUS_PATH}/:id`, async (c) => {
    const row = await tus.get(c.req.param("id"), c.get("principal"));
    const resource = await tus.outcome(row);
    const named: Record<string, string> = resource
      ? { location: dataPath(resource), link: `<${dataPath(resource)}>; rel="related"` }
      : {};
    return c.body(null, 200, { ...uploadHeaders(row), ...named });
  });

  router.patch(`${TUS_PATH}/:id`, async (c) => {
    const row = await tus.get(c.req.param("id"), c.get("principal"));
    const offset = integerHeader("upload-offset", c.req.header("upload-offset"));
    if (offset === undefined) {
      throw new ProblemError("VALIDATION_FAILED", "Upload-Offset is required", {
        errors: [{ pointer: "/header/upload-offset", detail: "required" }],
      });
    }
    return appendAndAnswer(c, row, offset, 204);
  });

  router.delete(`${TUS_PATH}/:id`, async (c) => {
    await tus.terminate(await tus.get(c.req.param("id"), c.get("principal")));
    return c.body(null, 204);
  });
  return router;
}
