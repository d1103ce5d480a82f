/** zod schemas for updateResource, deleteResource, the admin purge and revisions. */
import { z } from "@hono/zod-openapi";
import { LockedResourceRequestSchema } from "../locks/schemas.js";
import {
  AuthorSchema,
  BinarySchema,
  checkContentFields,
  ExternalUriSchema,
  MediaTypeSchema,
  optional,
  ResourceNameSchema,
  ResourceUidSchema,
} from "../resources/schemas.js";

/**
 * A new download name, or the current one echoed back: a package file's name is its path
 * (`images/logo.png`), which the LockedResourceDTO carries, so a path passes here and
 * lifecycle.update accepts it only unchanged.
 */
const UpdateNameSchema = z
  .string()
  .max(1024, { message: "must be at most 1024 characters" })
  .refine((s) => s.split("/").every((segment) => ResourceNameSchema.safeParse(segment).success), {
    message:
      "must be a file name (no '/' or '\\', control characters, '.' or '..'), or the resource's current path unchanged",
  })
  .openapi({ example: "logo.png" });

/**
 * UpdateResourceDTO: `author` + `lockID` prove the lock; `resourceAuthor`, `resourceName`
 * and `resourceMediaType` replace what they name; at most one of the content fields replaces the content.
 * `resourceAuthor` means what it means in createResource, the resource's author; sent without
 * `author` (as a createResource caller would), it also names the lock's owner.
 */
export const UpdateResourceRequestSchema = LockedResourceRequestSchema.extend({
  author: optional(AuthorSchema).openapi({
    description:
      "The lock owner given when locking. May be left out when resourceAuthor names the same person; one of the two is required.",
  }),
  resourceAuthor: optional(AuthorSchema).openapi({
    description:
      "The resource's author, as in createResource: recorded on this revision (unchanged when absent). " +
      "Without `author`, it is also the lock owner given when locking.",
  }),
  resourceName: optional(UpdateNameSchema).openapi({
    description:
      "New name (download name; a file name); the URI does not change. A package file's current path may be echoed unchanged.",
  }),
  resourceMediaType: optional(MediaTypeSchema).openapi({
    description: "New media type. When absent: detected from new content by its signature, else unchanged.",
  }),
  resourceBinary: optional(BinarySchema),
  resourceExternalURI: optional(ExternalUriSchema),
})
  .superRefine(...checkContentFields(false))
  .superRefine(
    (body, ctx) => {
      if (body.author === undefined && body.resourceAuthor === undefined)
        ctx.addIssue({
          code: "custom",
          path: ["author"],
          message: "required: the lock owner given when locking (or resourceAuthor, as createResource names it)",
        });
    },
    { when: checkContentFields(false)[1].when },
  )
  .openapi("UpdateResourceDTO");

/** The field that named the lock's owner in an update: what a refusal of that name points at. */
export const ownerFieldOf = (body: { author?: string }) => (body.author === undefined ? "resourceAuthor" : "author");

export const PurgeRequestSchema = z.object({ resourceUID: ResourceUidSchema }).openapi("PurgeRequest");

export const PurgeResultSchema = z
  .object({
    purged: z.array(z.string()).openapi({ description: "UIDs removed: the resource and, for a package, its files." }),
    blobsRemoved: z
      .number()
      .int()
      .openapi({ description: "Stored contents no longer referenced by anything, now deleted." }),
  })
  .openapi("PurgeResult");

export const RevisionParamsSchema = z.object({
  resourceUID: z
    .string()
    .openapi({ param: { name: "resourceUID", in: "path" }, example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
  revision: z.coerce
    .number()
    .int({ message: "must be an integer" })
    .min(1, { message: "must be at least 1" })
    .openapi({ param: { name: "revision", in: "path" }, example: 1 }),
});

export const RevisionSchema = z
  .object({
    revision: z.number().int(),
    action: z.enum(["create", "update", "delete"]),
    resourceName: z.string(),
    author: z.string(),
    mediaType: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    createdAt: z.string().openapi({ format: "date-time" }),
    dataURI: z
      .string()
      .openapi({ description: "Stable URL of this revision's content (while the resource is not deleted)." }),
  })
  .openapi("Revision");

export const RevisionListSchema = z
  .object({ resourceUID: z.string(), revisions: z.array(RevisionSchema) })
  .openapi("RevisionList");
