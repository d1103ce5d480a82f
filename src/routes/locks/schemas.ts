/**
 * The lock DTOs, field names as sastix/cms clients send them: LockedResourceDTO for resource locks and
 * NewLockDTO/LockDTO/QueryLockDTO for named locks, whose UID field is `uid` in JSON.
 */
import { z } from "@hono/zod-openapi";
import { AuthorSchema, ImageDimensionFields, ResourceItemSchema, ResourceUidSchema } from "../resources/schemas.js";

/** ISO-8601 or epoch milliseconds, as Jackson's Joda module accepted; answered as ISO-8601 UTC. */
export const InstantSchema = z
  .union([z.iso.datetime({ offset: true, message: "must be an ISO-8601 date-time" }), z.number().int().nonnegative()])
  .transform((v) => (typeof v === "number" ? v : Date.parse(v)))
  .openapi({ type: "string", format: "date-time", example: "2025-01-31T12:30:00.000Z" });

const LockIdSchema = z.string().min(1, { message: "must not be empty" }).max(200).openapi({ example: "0b1c8f0e-…" });
const LockNameSchema = z
  .string()
  .min(1, { message: "must not be empty" })
  .max(400)
  .openapi({ example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" });

/** Fields of a ResourceDTO a client may echo back; the server reads its own copy instead. */
const EchoedFields = {
  resourceURI: z.string().nullish().openapi({ description: "Ignored (clients echo it)." }),
  resourcesList: z.array(z.unknown()).nullish().openapi({ description: "Ignored." }),
};

export const LockResourceRequestSchema = z
  .object({
    resourceUID: ResourceUidSchema,
    author: AuthorSchema.openapi({
      description: "Name of the lock owner (a label; the holder is the token's subject).",
    }),
    ...EchoedFields,
  })
  .openapi("ResourceDTO");

export const LockedResourceRequestSchema = z
  .object({
    resourceUID: ResourceUidSchema,
    author: AuthorSchema.openapi({ description: "The lock owner given when locking." }),
    lockID: LockIdSchema,
    lockExpirationDate: InstantSchema.nullish().openapi({ description: "Ignored: the server knows the expiry." }),
    resourceName: z.string().nullish().openapi({ description: "Ignored." }),
    ...EchoedFields,
  })
  .openapi("LockedResourceDTO");

export const LockedResourceSchema = z
  .object({
    resourceUID: z.string(),
    author: z.string(),
    resourceURI: z.string(),
    versionedURI: z
      .string()
      .optional()
      .openapi({ description: "updateResource: the resourceURI with `?v=` naming the new content (see Resource)." }),
    resourcesList: z.array(ResourceItemSchema).nullable(),
    lockID: z.string(),
    lockExpirationDate: z.string().openapi({ format: "date-time" }),
    resourceName: z.string(),
    ...ImageDimensionFields,
  })
  .openapi("LockedResource");

export const NewLockRequestSchema = z
  .object({
    uid: LockNameSchema,
    lockOwner: AuthorSchema,
    lockExpiration: InstantSchema.nullish().openapi({
      description: "Default now + CMS_LOCK_TTL; at most CMS_LOCK_MAX_TTL ahead.",
    }),
  })
  .openapi("NewLockDTO");

export const LockRequestSchema = z
  .object({
    uid: LockNameSchema,
    lockID: LockIdSchema,
    lockOwner: AuthorSchema,
    lockExpiration: InstantSchema.nullish().openapi({
      description:
        "renewResourceLock: the wanted expiry; the lock is extended to this or now + CMS_LOCK_TTL, whichever is later.",
    }),
  })
  .openapi("LockDTO");

export const QueryLockRequestSchema = z.object({ uid: LockNameSchema }).openapi("QueryLockDTO");

export const LockSchema = z
  .object({
    lockID: z
      .string()
      .nullable()
      .openapi({ description: "null in queryResourceLock unless the caller holds the lock." }),
    lockOwner: z.string(),
    lockExpiration: z.string().openapi({ format: "date-time" }),
    uid: z.string(),
  })
  .openapi("Lock");

export const ResourceAccessSchema = z
  .object({
    resourceUID: z.string(),
    lock: LockSchema.nullable().openapi({
      description: "The live lock (lockID only for its holder); null when not locked.",
    }),
    may: z
      .object({
        modify: z.boolean().openapi({
          description:
            "updateResource, lockResourceDTO and deleteResource are open to the caller (admin, or the creator who owns it)",
        }),
        purge: z.boolean().openapi({ description: "purgeResource is open to the caller (admin)" }),
      })
      .openapi({
        description:
          "What the caller's roles and ownership allow; the actions themselves still decide (a lock held by another still refuses).",
      }),
  })
  .openapi("ResourceAccess");
