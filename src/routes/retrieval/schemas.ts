/** zod schemas for reading content: the URI path parameters and the anchor's DataDTO. */
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

export const UidParamsSchema = z.object({
  resourceUID: z.string().openapi({ param: { name: "resourceUID", in: "path" }, example: "01k9z6w5xq0a3b4c5d6e7f8g9h0j1k-zaq12345" }),
});

export const DataRequestSchema = z
  .object({
    resourceUID: z.string().max(400).nullish(),
    resourceURI: z.string().max(2048).nullish(),
  })
  .superRefine((value, ctx) => {
    if (!value.resourceUID && !value.resourceURI) {
      for (const path of ["resourceUID", "resourceURI"]) ctx.addIssue({ code: "custom", path: [path], message: "one of resourceUID or resourceURI is required" });
    }
  })
  .openapi("DataDTO", { description: "resourceUID wins when both are given." });
