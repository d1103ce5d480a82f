/** createUploadURL, completeUpload and the service-hosted PUT: thin handlers over services/direct-uploads. */
import type { Guards } from "../../auth/guards.js";
import { dataPath } from "../../api-paths.js";
import type { DirectUploadService } from "../../services/direct-uploads.js";
import { createRouter, guarded } from "../router.js";
import { toResourceView } from "../resources/views.js";
import { completeUpload, createUploadURL, DIRECT_PUT_PATH, directPut } from "./contract.js";

export interface DirectRouterDeps {
  direct: DirectUploadService;
  guards: Guards;
  /** Origin of the service-hosted upload URLs; unset: the request's own. */
  publicUrl?: string;
}

export function createDirectRouter({ direct, guards, publicUrl }: DirectRouterDeps) {
  const creator = guards.role("creator");
  return createRouter()
    .openapi(guarded(createUploadURL, creator), async (c) => {
      // The URL goes back to this caller only, so the request's own origin is safe to use without CMS_PUBLIC_URL.
      const origin = publicUrl ?? new URL(c.req.url).origin;
      const ticket = await direct.createUploadURL(
        c.req.valid("json"),
        c.get("principal"),
        (id, token) => new URL(`${DIRECT_PUT_PATH}/${id}?token=${token}`, origin).href,
      );
      return c.json(ticket, 201);
    })
    .openapi(guarded(completeUpload, creator), async (c) => {
      const created = await direct.completeUpload(c.req.valid("json").uploadId, c.get("principal"));
      return c.json(toResourceView(created.primary, created.files), 201, { location: dataPath(created.primary) });
    })
    .openapi(directPut, async (c) => {
      const { uploadId } = c.req.valid("param");
      const length = c.req.header("content-length");
      const body = c.req.raw.body ?? new Response(new Uint8Array(0)).body!;
      await direct.receive(uploadId, c.req.valid("query").token, body, length === undefined ? null : Number(length));
      return c.body(null, 204);
    });
}
